import Foundation
import MPCCrypto
import MPCProtocols

/// The app's half of a presignature (`docs/protocol/session.md` §8): made by `preSignature(keyshare:…)` of a
/// `TrioSession` (with node A or B) or a `DuoSession` (with its node) — ECDSA: DKLs23 rounds 1–2; EdDSA: FROST
/// round 1 — and finished once by `preSignatureFinal(preSignature:message:)` of the same kind of session over
/// one HTTP POST to that node X (through A when X = B).
///
/// It survives an app restart: the SDK keeps it sealed in the session's `StorageClient`
/// (`docs/presignature-lifecycle.md`), and `preSignatures(keyshare:)` gives back the usable ones.
/// Strictly single use, across restarts: the first `preSignatureFinal` durably records its message and
/// request (a tombstone) before anything is sent, so every later use with another message is
/// `presignatureConsumed` — a second finish with another message would reveal the key — and a retry with
/// the same message resends the same bytes. A reference type, deliberately not `Codable`, so a copy
/// cannot silently duplicate the secrets. Its description shows no secrets.
public final class PreSignature: Sendable {
    /// The presignature id (the preSign session's instance id), 32 bytes.
    public let id: Data
    /// The key id (hex) of the keyshare that presigned.
    public let keyId: String
    /// The generation (32 bytes) of the keyshare that presigned; a refresh makes the presignature unusable.
    public let generation: Data
    /// The co-signing node X's party index (duo: 1; trio: 1 = A, 2 = B).
    package let signerIndex: PartyIndex
    /// The mode of the session that made it (duo or trio); only a session of that mode finishes it.
    package let mode: SessionMode
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
    package let algorithm: Keyshare.Algorithm

    package struct Secrets: Sendable {
        /// ECDSA: `DKLsPresignature.serialized()`; EdDSA: `FROST.Presignature.serialized()`.
        package let presignature: [UInt8]
        package let finalKeys: PreSignFinalKeys
        /// EdDSA: the app keyshare (the share computation needs s_0) and X's round-1 commitments.
        package var frostKeyshare: FROST.Keyshare? = nil
        package var peerRound1: [UInt8] = []

        package init(presignature: [UInt8], finalKeys: PreSignFinalKeys, frostKeyshare: FROST.Keyshare? = nil,
                     peerRound1: [UInt8] = []) {
            self.presignature = presignature
            self.finalKeys = finalKeys
            self.frostKeyshare = frostKeyshare
            self.peerRound1 = peerRound1
        }
    }

    /// The request of a finish, with what combines X's answer into the signature (session.md §8.5: a retry with the
    /// same message resends these exact bytes; the node answers from its finish record).
    package struct Pending: Sendable {
        let message: [UInt8]
        let request: [UInt8]
        /// The app's finish and what combines X's into the signature (`PreSignFinalExchange.Requester`).
        let finish: PreSignFinalExchange.Requester
        let keys: PreSignFinalKeys
    }

    private struct State: Sendable {
        var secrets: Secrets?
        var consumed = false
        var pendingMessage: Data?
    }

    private let state: LockedValue<State>

    package init(id: [UInt8], keyId: String, generation: [UInt8], mode: SessionMode, signerIndex: PartyIndex,
                 chainPath: String, derivedPublicKey: [UInt8], expiresAt: Date, algorithm: Keyshare.Algorithm,
                 secrets: Secrets, pendingMessage: [UInt8]? = nil) {
        self.id = Data(id)
        self.keyId = keyId
        self.generation = Data(generation)
        self.mode = mode
        self.signerIndex = signerIndex
        self.chainPath = chainPath
        self.derivedPublicKey = Data(derivedPublicKey)
        self.expiresAt = expiresAt
        self.algorithm = algorithm
        state = LockedValue(State(secrets: secrets, consumed: pendingMessage != nil, pendingMessage: pendingMessage.map { Data($0) }))
    }

    /// Whether a finish of it was recorded (its message is then fixed), here or in an earlier run.
    public var isConsumed: Bool { state.withLock { $0.consumed } }

    /// The secrets, while the presignature still has them (they are erased once it is finished).
    package var secrets: Secrets? { state.withLock { $0.secrets } }

    /// A finish on `message` was recorded: every other message is refused from now on.
    package func recordFinishing(_ message: [UInt8]) {
        state.withLock {
            $0.consumed = true
            $0.pendingMessage = Data(message)
        }
    }

    /// Finished or gone: no secrets are kept.
    package func markUsedUp() {
        state.withLock {
            $0.consumed = true
            $0.secrets = nil
        }
    }

    /// The record id of this presignature in `StorageClient` (session.md §8.2).
    package var recordKeyId: String { "~ss/presig/" + Hex.encode([UInt8](id)) }

    /// Takes the secrets out, once (tests build their own requests with them).
    package func take() -> Secrets? {
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
        "PreSignature(\(mode) key \(keyId), node \(signerIndex), id \(Hex.encode([UInt8](id.prefix(4))))…, expires \(expiresAt), "
            + "consumed: \(isConsumed))"
    }
}

/// What a preSign step ends with at the app: its half of the presignature, the signer's STORED and the
/// keys of the later preSignFinal POST.
package struct PresignStep: Sendable {
    package var presignature: SessionPresignature
    package var stored: StoredPayload
    package var keys: PreSignFinalKeys
}
