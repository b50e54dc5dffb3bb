import Foundation
import MPCCrypto
import MPCProtocols

/// A signature a signing run produced, verified under the derived public key by the party that
/// computed it.
package enum SessionSignature: Sendable, Equatable {
    /// An ECDSA signature (r, s, recovery id).
    case ecdsa(Secp256k1.ECDSASignature)
    /// A 64-byte Ed25519 signature.
    case eddsa([UInt8])

    /// The SDK's public `Signature`.
    package func signature() throws(SilentShardError) -> Signature {
        switch self {
        case .ecdsa(let signature): return Signature(ecdsa: signature)
        case .eddsa(let bytes): return try Signature(eddsa: Data(bytes))
        }
    }

    /// The DONE payload that confirms this signature to the other parties (session.md §5.2).
    package var done: DonePayload {
        switch self {
        case .ecdsa(let signature): return .ecdsa(signature.r + signature.s + [signature.recoveryId])
        case .eddsa(let bytes): return .eddsa(bytes)
        }
    }
}

/// This party's half of a presignature (single use).
package enum SessionPresignature: Sendable {
    /// DKLs23 rounds 1–2 (`dkls23.md` §13.4).
    case ecdsa(DKLsPresignature)
    /// FROST round 1: this party's nonces and the co-signer's commitments `enc(D) ‖ enc(E)`.
    case eddsa(FROSTPresignatureShare)
}

/// A FROST presignature as one party keeps it: its own nonces (secret, single use) and its
/// co-signer's round-1 commitments.
package struct FROSTPresignatureShare: Sendable {
    package var presignature: FROST.Presignature
    package var peer: PartyIndex
    package var peerRound1: [UInt8]
}

/// An exporter's run ended: its encrypted share went out to the receiver.
package struct ExportShareSent: Sendable, Equatable {}
