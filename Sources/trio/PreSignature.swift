import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The app's half of a trio presignature (`docs/protocol/session.md` §8): made by
/// `TrioSession.preSignature(keyshare:chainPath:)` with one node X (ECDSA: DKLs23 rounds 1–2; EdDSA:
/// FROST round 1), finished once by `TrioSession.preSignatureFinal(preSignature:message:)` over HTTP POST
/// to X (through A when X = B).
///
/// It survives an app restart: the SDK keeps it sealed in the session's `StorageClient`
/// (`docs/presignature-lifecycle.md`), and `TrioSession.preSignatures(keyshare:)` gives back the usable ones.
/// Strictly single use, across restarts: the first `preSignatureFinal` durably records its message and
/// request (a tombstone) before anything is sent, so every later use with another message is
/// `presignatureConsumed` — a second finish with another message would reveal the key — and a retry with
/// the same message resends the same bytes. A reference type, deliberately not `Codable`, so a copy
/// cannot silently duplicate the secrets. Its description shows no secrets.
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
    /// The message a `preSignatureFinal` of an earlier run (interrupted, e.g. by the app being killed)
    /// recorded for this presignature: it can be finished on this message only. Nil when unused.
    public var pendingMessage: Data? { state.withLock { $0.pendingMessage } }
    let algorithm: Keyshare.Algorithm

    struct Secrets: Sendable {
        /// ECDSA: `DKLsPresignature.serialized()`; EdDSA: `FROST.Presignature.serialized()`.
        let presignature: [UInt8]
        let finalKeys: PreSignFinalKeys
        /// EdDSA: the app keyshare (the share computation needs s_0) and X's round-1 commitments.
        var frostKeyshare: FROST.Keyshare? = nil
        var peerRound1: [UInt8] = []
    }

    /// The request of a finish, with what combines X's answer into the signature (§8.5: a retry with the
    /// same message resends these exact bytes; the node answers from its finish record).
    struct Pending: Sendable {
        let message: [UInt8]
        let request: [UInt8]
        /// ECDSA: the finish state; EdDSA: the signing session after round 2.
        let finishState: DKLsSign.FinishState?
        let frostSession: FROST.SigningSession?
        let keys: PreSignFinalKeys
    }

    private struct State: Sendable {
        var secrets: Secrets?
        var consumed = false
        var pendingMessage: Data?
    }

    private let state: LockedValue<State>

    init(id: [UInt8], keyId: String, generation: [UInt8], signer: TrioSigner, chainPath: String, derivedPublicKey: [UInt8],
         expiresAt: Date, algorithm: Keyshare.Algorithm, secrets: Secrets, pendingMessage: [UInt8]? = nil) {
        self.id = Data(id)
        self.keyId = keyId
        self.generation = Data(generation)
        self.signer = signer
        self.chainPath = chainPath
        self.derivedPublicKey = Data(derivedPublicKey)
        self.expiresAt = expiresAt
        self.algorithm = algorithm
        state = LockedValue(State(secrets: secrets, consumed: pendingMessage != nil, pendingMessage: pendingMessage.map { Data($0) }))
    }

    /// Whether a finish of it was recorded (its message is then fixed), here or in an earlier run.
    public var isConsumed: Bool { state.withLock { $0.consumed } }

    /// The secrets, while the presignature still has them (they are erased once it is finished).
    var secrets: Secrets? { state.withLock { $0.secrets } }

    /// A finish on `message` was recorded: every other message is refused from now on.
    func recordFinishing(_ message: [UInt8]) {
        state.withLock {
            $0.consumed = true
            $0.pendingMessage = Data(message)
        }
    }

    /// Finished or gone: no secrets are kept.
    func markUsedUp() {
        state.withLock {
            $0.consumed = true
            $0.secrets = nil
        }
    }

    /// The record id of this presignature in `StorageClient` (§8.2).
    var recordKeyId: String { "~ss/presig/" + Hex.encode([UInt8](id)) }

    /// Takes the secrets out, once (tests build their own requests with them).
    func take() -> Secrets? {
        state.withLock { value in
            let taken = value.secrets
            value.secrets = nil
            value.consumed = true
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
