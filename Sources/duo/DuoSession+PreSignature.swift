import Foundation
import SilentShardCore

/// Duo presignatures (protocol v2, issue 20; `docs/protocol/session.md` §8, `docs/presignature-lifecycle.md`):
/// presign while idle (one WebSocket step), then sign with one HTTP POST when the user taps — the same
/// single-use, restart-safe `PreSignature` as trio's, with the node as X.
extension DuoSession {
    /// Presigns with the node along the soft `chainPath`: ECDSA rounds 1–2 of DKLs23 signing (EdDSA: FROST
    /// round 1) now, so that `preSignatureFinal` needs one POST. The node stores its half before it answers
    /// STORED; the app keeps its half sealed in the session's `StorageClient` before returning it.
    /// - Parameter ttl: requested lifetime in seconds (the node caps it; default 24 h, at most 7 days).
    public func preSignature(keyshare: Keyshare, chainPath: String = "m", ttl: UInt32? = nil) async throws(SilentShardError) -> PreSignature {
        try await core.observed(.preSign, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.preSign(keyshare: keyshare, chainPath: chainPath, signer: 1, ttl: ttl, action: actions.preSign)
        }
    }

    /// Finishes `preSignature` on `message` (ECDSA: the 32-byte hash) with one HTTP POST to the node
    /// (`NetworkClient.sendPostRequest`, which a custom transport must implement for this) and returns the
    /// signature, verified under the derived key. Single use, also across app restarts: once its finish is
    /// durably recorded (before the POST), only `message` can finish it — a retry resends the same request
    /// and gets the same signature; any other message is `presignatureConsumed`.
    public func preSignatureFinal(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        try await core.observed(.preSignFinal, keyId: preSignature.keyId) { () throws(SilentShardError) in
            try await core.preSignatureFinal(preSignature, message: message, action: actions.preSignFinal)
        }
    }

    /// The presignatures of `keyshare`'s key that this app holds and can still finish, soonest to expire
    /// first (see `TrioSession.preSignatures(keyshare:)`). No network.
    public func preSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("preSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.storedPreSignatures(keyshare: keyshare)
        }
    }

    /// Asks the node which of `keyshare`'s presignatures it still holds (session.md §8.6; its answer signed by
    /// the `cloudVerifyingKey`), deletes the app's records of those it can no longer finish, and returns what
    /// `preSignatures(keyshare:)` then lists.
    public func reconcilePreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("reconcilePreSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.reconcilePreSignatures(keyshare: keyshare, action: actions.preSignFinal)
        }
    }
}
