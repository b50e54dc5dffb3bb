import Foundation
import MPCCrypto
import SilentShardCore
import duo

/// One simulated app of the load driver: its own device key and keyshare storage, a duo keygen then a
/// verified sign, each retried (`attempts` tries in all) when it fails — the way an app retries after
/// a node process dies under it.
struct LoadSession: Sendable {
    /// The app's device key (kept for the post-run checks: a key is used with the device that made it).
    let signer: SoftwareEd25519MessageSigner
    /// The app's keyshare records (staged and current), kept across retries for reconcile.
    let storage: InMemoryStorageClient
    let algorithm: Keyshare.Algorithm
    let cloudKey: String
    let token: String?

    /// What happened to one session.
    struct Outcome: Sendable {
        /// The keygen result (nil: every keygen attempt failed).
        var keyshare: Keyshare?
        /// Whether a signature was made and verified under the key.
        var signed = false
        /// Whether the first attempt of keygen or of sign failed.
        var firstTryFailed = false
        /// Attempts after the first, over keygen, reconcile and sign.
        var retries = 0
        /// Keygens that ended in doubt (`reconcileRequired`) and were settled by reconcile.
        var reconciled = 0
        /// The last error when the session failed for good (no secrets: `SilentShardError` descriptions).
        var failure: String?
        /// A signature that did not verify: never retried, always a failure.
        var badSignature = false
    }

    init(algorithm: Keyshare.Algorithm, cloudKey: String, token: String?) {
        signer = SoftwareEd25519MessageSigner()
        storage = InMemoryStorageClient()
        self.algorithm = algorithm
        self.cloudKey = cloudKey
        self.token = token
    }

    /// A `DuoSession` of this app talking to `url` (one WebSocket per step).
    func session(url: String) -> DuoSession {
        let client = DuoNetworkClient(websocketConfig: WebsocketConfig(url: url, authenticationToken: token))
        return algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
            : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, networkClient: client,
                                             storageClient: storage)
    }

    /// Keygen, then sign and verify, through `url`, with up to `attempts` tries per operation.
    func run(url: String, attempts: Int) async -> Outcome {
        let session = session(url: url)
        var outcome = Outcome()
        var pendingKeyId: String?
        var lastError = ""
        // Keygen: a keygen left in doubt (the node died after COMMIT) is settled with reconcile through
        // the same URL (another process answers); one the node never committed starts over.
        for attempt in 0..<attempts where outcome.keyshare == nil {
            if attempt > 0 { outcome.retries += 1; await Self.backoff(attempt) }
            do {
                if let keyId = pendingKeyId {
                    do {
                        outcome.keyshare = try await session.reconcileKeyshare(keyId: keyId)
                        outcome.reconciled += 1
                        break
                    } catch {
                        guard case .abortedKeyshare = error else { throw error }
                        pendingKeyId = nil  // rolled back at both sides: no key; a fresh keygen below
                    }
                }
                outcome.keyshare = try await session.keygen()
            } catch {
                if attempt == 0 { outcome.firstTryFailed = true }
                if case .reconcileRequired(let keyId)? = error as? SilentShardError { pendingKeyId = keyId }
                lastError = "keygen: \(error)"
            }
        }
        guard let keyshare = outcome.keyshare else {
            outcome.failure = lastError
            return outcome
        }
        for attempt in 0..<attempts {
            if attempt > 0 { outcome.retries += 1; await Self.backoff(attempt) }
            let message = Self.message(for: algorithm)
            do {
                let signature = try await session.signature(keyshare: keyshare, message: message)
                guard Self.verifies(signature, message: message, keyshare: keyshare) else {
                    outcome.badSignature = true
                    outcome.failure = "sign: the signature does not verify under the key"
                    return outcome
                }
                outcome.signed = true
                return outcome
            } catch {
                if attempt == 0 { outcome.firstTryFailed = true }
                lastError = "sign: \(error)"
            }
        }
        outcome.failure = lastError
        return outcome
    }

    /// One sign through `url` with the session's key, no retry; nil when it verified, else why not.
    func checkSign(keyshare: Keyshare, url: String) async -> String? {
        let message = Self.message(for: algorithm)
        do {
            let signature = try await session(url: url).signature(keyshare: keyshare, message: message)
            return Self.verifies(signature, message: message, keyshare: keyshare) ? nil : "the signature does not verify"
        } catch {
            return "\(error)"
        }
    }

    /// A random message: a 32-byte hash for ECDSA, 64 bytes for EdDSA.
    static func message(for algorithm: Keyshare.Algorithm) -> Data {
        Data(SecureRandom.bytes(count: algorithm == .ecdsa ? 32 : 64))
    }

    /// libsecp256k1 verify + key recovery (ECDSA) or libsodium strict verify (EdDSA) under the root key.
    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) -> Bool {
        signature.algorithm == keyshare.algorithm && signature.isValid(for: message, publicKey: keyshare.publicKey)
    }

    /// 100 ms, 200 ms, 400 ms … (at most 1.6 s): a dead process leaves nginx's rotation after one failure.
    static func backoff(_ attempt: Int) async {
        try? await Task.sleep(for: .milliseconds(100 << min(attempt - 1, 4)))
    }
}
