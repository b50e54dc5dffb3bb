import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The app's half of a trio presignature (`docs/protocol/session.md` §8): made by
/// `TrioSession.preSignature(keyshare:chainPath:)` with one node X (ECDSA: DKLs23 rounds 1–2; EdDSA:
/// FROST round 1), finished once by
/// `TrioSession.preSignatureFinal(preSignature:message:)` over HTTP POST to X (through A when X = B).
///
/// Strictly single use: the first `preSignatureFinal` takes the secrets out (even if that call then
/// fails), so every later use is `presignatureConsumed` — a second finish with another message would
/// reveal the key. A reference type with the secrets behind a lock, deliberately not `Codable`, so a
/// copy cannot silently duplicate them. Its description shows no secrets.
public final class PreSignature: Sendable {
    /// The presignature id (the preSign session's instance id), 32 bytes.
    public let id: Data
    /// The key id (hex) and generation of the keyshare that presigned.
    public let keyId: String
    public let generation: Data
    /// The co-signing node X.
    public let signer: TrioSigner
    /// The soft derivation path the signature will be under.
    public let chainPath: String
    /// P′: the (derived) public key the signature will verify under (ECDSA compressed secp256k1,
    /// EdDSA 32 bytes).
    public let derivedPublicKey: Data
    /// After this instant the node refuses the presignature (the app refuses 60 s earlier).
    public let expiresAt: Date
    let algorithm: Keyshare.Algorithm

    struct Secrets: Sendable {
        /// ECDSA: `DKLsPresignature.serialized()`; EdDSA: `FROST.Presignature.serialized()`.
        let presignature: [UInt8]
        let finalKeys: PreSignFinalKeys
        /// EdDSA: the app keyshare (the share computation needs s_0) and X's round-1 commitments.
        var frostKeyshare: FROST.Keyshare? = nil
        var peerRound1: [UInt8] = []
    }

    /// The request sent by the first `preSignatureFinal` (§8.5: a retry with the same message resends
    /// these exact bytes; the node answers from its finish record).
    struct Pending: Sendable {
        let message: [UInt8]
        let request: [UInt8]
        /// ECDSA: the finish state; EdDSA: the signing session after round 2.
        let finishState: DKLsSign.FinishState?
        let frostSession: FROST.SigningSession?
        let keys: PreSignFinalKeys
    }

    enum Use: Sendable {
        case fresh(Secrets)
        case resend(Pending)
        case consumed
    }

    private let secrets: LockedValue<Secrets?>
    private let pending = LockedValue<Pending?>(nil)

    init(id: [UInt8], keyId: String, generation: [UInt8], signer: TrioSigner, chainPath: String, derivedPublicKey: [UInt8],
         expiresAt: Date, algorithm: Keyshare.Algorithm, secrets: Secrets) {
        self.id = Data(id)
        self.keyId = keyId
        self.generation = Data(generation)
        self.signer = signer
        self.chainPath = chainPath
        self.derivedPublicKey = Data(derivedPublicKey)
        self.expiresAt = expiresAt
        self.algorithm = algorithm
        self.secrets = LockedValue(secrets)
    }

    /// Whether it was used (or handed to a `preSignatureFinal` call).
    public var isConsumed: Bool { secrets.withLock { $0 == nil } }

    /// The first call takes the secrets; later calls get the pending request if it was for `message`.
    func use(for message: [UInt8]) -> Use {
        if let secrets = take() { return .fresh(secrets) }
        if let sent = pending.withLock({ $0 }), sent.message == message { return .resend(sent) }
        return .consumed
    }

    func recordSent(_ sent: Pending) { pending.withLock { $0 = sent } }

    /// The app's tombstone key id in `StorageClient` (§8.2).
    var tombstoneKeyId: String { "~ss/presig/" + Hex.encode([UInt8](id)) }

    /// Takes the secrets out, once.
    func take() -> Secrets? {
        secrets.withLock { value in
            let taken = value
            value = nil
            return taken
        }
    }
}

extension PreSignature: CustomStringConvertible {
    /// No secrets: ids, signer, expiry, and whether it was consumed.
    public var description: String {
        "PreSignature(key \(keyId), signer \(signer), id \(Hex.encode([UInt8](id.prefix(4))))…, expires \(expiresAt), "
            + "consumed: \(isConsumed))"
    }
}

/// What a preSign step ends with at the app: its half of the presignature, the signer's STORED and the
/// keys of the later preSignFinal POST.
struct PresignStep: Sendable {
    var presignature: SessionPresignature
    var stored: StoredPayload
    var keys: PreSignFinalKeys
}
