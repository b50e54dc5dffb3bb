import Foundation
import MPCCrypto
import SilentShardCore

/// Presignatures (`docs/protocol/session.md` §8; ECDSA, `dkls23.md` §13.4): preSign over the WebSocket with
/// one node X (stored there, STORED), the finish later over one HTTP POST (FINAL_REQUEST →
/// FINAL_RESPONSE, end-to-end encrypted between the app and X with the preSignFinal keys), single use
/// across app restarts (`docs/presignature-lifecycle.md`).
extension TrioSession {
    /// Presigns with node A (default) or B along the soft `chainPath`: ECDSA rounds 1–2 of DKLs23
    /// signing (EdDSA: FROST round 1) now, so that `preSignatureFinal` needs one POST. X stores its half
    /// (bound to key id, generation, signer set, path) before it answers STORED; the app keeps its half
    /// sealed in the session's `StorageClient` before returning it.
    /// - Parameter ttl: requested lifetime in seconds (the node caps it; default 24 h).
    public func preSignature(keyshare: Keyshare, chainPath: String = "m", signer: TrioSigner = .nodeA,
                             ttl: UInt32? = nil) async throws(SilentShardError) -> PreSignature {
        try await core.observed(.preSign, keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.preSign(keyshare: keyshare, chainPath: chainPath, signer: signer.index, ttl: ttl,
                                   action: actions.preSign)
        }
    }

    /// Finishes `preSignature` on `message` (ECDSA: the 32-byte hash) with one HTTP POST to its node
    /// (`NetworkClient.sendPostRequest`; through A when the signer is B) and returns the signature,
    /// verified under the derived key.
    ///
    /// The presignature is consumed once its finish is durably recorded, before the POST: from then on
    /// only `message` can finish it — a retry (also after an app restart, see `preSignatures(keyshare:)`
    /// and `PreSignature.pendingMessage`) resends the same request and gets the same signature; any other
    /// message is `presignatureConsumed`. A failure before that (an invalid message, an expired
    /// presignature, a storage error) leaves it unused.
    public func preSignatureFinal(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        try await core.observed(.preSignFinal, keyId: preSignature.keyId) { () throws(SilentShardError) in
            try await core.preSignatureFinal(preSignature, message: message, action: actions.preSignFinal)
        }
    }

    /// The presignatures of `keyshare`'s key that this app holds and can still finish, soonest to expire
    /// first: unused ones (finish them on any message) and ones whose finish was recorded before an
    /// interruption (`PreSignature.pendingMessage` set: finish them on that message only, which resends
    /// the recorded request and returns the signature). No network.
    ///
    /// `keyshare` must be the app's current share of its key (`staleKeyshare` otherwise). Records this
    /// app can never use again are deleted on the way: those of older generations (the nodes dropped
    /// their halves at the refresh), unused ones within 60 s of expiry, tombstones 24 h past expiry, and
    /// records that fail their integrity check.
    public func preSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("preSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.storedPreSignatures(keyshare: keyshare)
        }
    }

    /// Asks each node which of `keyshare`'s presignatures (made with it) it still holds (session.md §8.6),
    /// deletes the app's records of those it can no longer finish, and returns what
    /// `preSignatures(keyshare:)` then lists. An unused presignature is kept only while its node holds it
    /// unused; one whose finish was recorded also while the node keeps the finish record that answers its
    /// resend. A node's answer must be signed by its key, certified by the cluster key for the keyshare's
    /// group; otherwise nothing is dropped and the error is thrown.
    public func reconcilePreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("reconcilePreSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.reconcilePreSignatures(keyshare: keyshare, action: actions.preSignFinal)
        }
    }
}

extension PreSignature {
    /// The co-signing node X of a trio presignature (A for a duo one, whose only node is party 1).
    public var signer: TrioSigner { signerIndex == 2 ? .nodeB : .nodeA }
}
