import MPCCrypto
import MPCProtocols

/// One signer's FROST signing from its nonces on (`docs/protocol/frost.md` §10.1 round 1's message, §10.2 round 2,
/// §10.3 aggregation, verified under PK′): the one place the session layer opens a FROST signing session. The
/// WebSocket signing run (``FROSTSignRun``), the app's preSignFinal and node X's answer to a FINAL_REQUEST
/// (``PreSignFinalExchange``, `docs/protocol/session.md` §8.4) all compute their round-2 share and aggregate
/// through it. A pure value: no I/O; round 2 consumes the nonces (`FROST.Presignature` is single use,
/// `docs/protocol/frost.md` §10.1).
package struct FROSTSignRounds: Sendable, SecretReflecting {
    private var session: FROST.SigningSession

    /// Signing of `message` with `keyshare` by `signers` along the soft `path`, with this signer's `nonces`
    /// (fresh, or a stored presignature). Another keyshare's or used nonces, a bad signer set or path are
    /// `invalidInput`.
    package init(keyshare: FROST.Keyshare, signers: [PartyIndex], message: [UInt8], path: [UInt32],
                 nonces: FROST.Presignature) throws(ProtocolError) {
        session = try FROST.SigningSession(keyshare: keyshare, signers: signers, message: message, path: path,
                                           presignature: nonces)
    }

    /// This signer's round-1 broadcast, `enc(D) ‖ enc(E)` (64 bytes).
    package var round1Message: [UInt8] { session.round1Message }

    /// Round 2 once every co-signer's round-1 commitments (`from`, 64 bytes each) are in: this signer's share,
    /// `transcript ‖ z` (64 bytes). A bad commitment is `abort(j)` and leaves the nonces unused; a missing one
    /// `abort(nil, missingMessages)`.
    package mutating func round2(commitments: [(PartyIndex, [UInt8])]) throws(ProtocolError) -> [UInt8] {
        for (from, payload) in commitments { try session.receiveRound1(payload, from: from) }
        return try session.round2()
    }

    /// The aggregate once every co-signer's share (`from`, 64 bytes each) is in: the 64-byte Ed25519 signature,
    /// verified under PK′. A share of the wrong size or another transcript is `abort(j)`; a signature that does
    /// not verify names the first bad share (`signingFailed(j, invalidSignatureShare)`).
    package mutating func signature(shares: [(PartyIndex, [UInt8])]) throws(ProtocolError) -> [UInt8] {
        for (from, payload) in shares { try session.receiveRound2(payload, from: from) }
        return try session.signature()
    }
}
