import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore

/// Reconcile (`specs/session.md` §7.3) and the automatic in-doubt handling of §5.3 for trio.
extension TrioSession {
    /// Settles the app's record for `keyId` with nodes A and B, e.g. after `reconcileRequired` or at
    /// launch: a staged share both nodes hold (committed, or PREPARED under the same digest) is
    /// committed and promoted; one that no node committed and at least one lacks is rolled back (the
    /// nodes tombstone it first, so it can never be committed later). Returns the resulting current
    /// keyshare. Idempotent.
    ///
    /// Throws `keyNotFound` without a local record, `abortedKeyshare` when the first generation of a
    /// key was rolled back, `staleKeyshare` when the nodes hold another generation than the app's
    /// current one, `reconcileConflict` for any other mix (an operator case).
    public func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let record else { throw .keyNotFound(keyId: keyId) }
        let current = try record.current.map { share throws(SilentShardError) in try TrioStoredShare(share) }
        let staged = try record.staged.map { share throws(SilentShardError) in try TrioStoredShare(share) }
        guard let reference = staged?.keyshare ?? current?.keyshare else { throw .keyNotFound(keyId: keyId) }
        try check(reference)
        let context = ReconcileContext(storageKeyId: keyId, current: current?.keyshare, staged: staged)
        let appState = AppState(currentGen: current.map { [UInt8]($0.keyshare.generation) },
                                staged: staged.map { ([UInt8]($0.keyshare.generation), $0.digest) })
        return try await step(.reconcile, action: transport.actions.reconcile, existing: reference,
                              participants: [0, 1, 2]) { setup in
            setup.keyID = reference.keyIdBytes
            setup.appState = appState.encoded
        } body: { channel, link throws(SilentShardError) in
            try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                try await runReconcile(context, nodes: link.nodes, channel: &channel, send: link.send, read: link.read)
            }
        }
    }

    /// The local record's shares for one reconcile.
    struct ReconcileContext: Sendable {
        let storageKeyId: String
        let current: Keyshare?
        let staged: TrioStoredShare?
    }

    /// §7.3 at the app (`AppReconcile`, trio policy) from the nodes' signed `key_status` blocks.
    func runReconcile(_ context: ReconcileContext, nodes: [PartyIndex], channel: inout PartyFrameChannel,
                      send: SessionDriver.Send, read: SessionDriver.Read) async throws(SilentShardError) -> Keyshare {
        try await AppReconcileExecutor.settle(storageKeyId: context.storageKeyId, current: context.current,
                                              staged: context.staged.map { ($0.keyshare, $0.digest) }, policy: .trio,
                                              nodes: nodes, channel: &channel, storageClient: storageClient, send: send,
                                              read: read)
    }

    /// Whether a node refused the step because a PREPARED generation blocks it (RECONCILE_REQUIRED).
    static func needsReconcile(_ error: SilentShardError) -> Bool {
        if case .rejected(let code, _, _, _) = error, code == WireCode.reconcileRequired.rawValue { return true }
        return false
    }

    /// §5.3: a share-changing step refused with RECONCILE_REQUIRED reconciles, then retries once.
    func retryingAfterReconcile(_ keyshare: Keyshare,
                                _ body: () async throws(SilentShardError) -> Keyshare) async throws(SilentShardError) -> Keyshare {
        do { return try await body() } catch {
            guard Self.needsReconcile(error) else { throw error }
            _ = try await reconcileKeyshare(keyId: keyshare.keyId)
            return try await body()
        }
    }

    /// §5.3: before an operation on a key whose record has a staged share, reconcile first.
    func settleIfStaged(_ keyshare: Keyshare) async throws(SilentShardError) {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        if record?.staged != nil { _ = try await reconcileKeyshare(keyId: keyshare.keyId) }
    }

    /// §5.3 IN_DOUBT: one reconcile right away; if it does not finish, `reconcileRequired` stands.
    func resolveInDoubt(_ error: SilentShardError, previous: Keyshare?) async throws(SilentShardError) -> Keyshare {
        guard case .reconcileRequired(let keyId) = error else { throw error }
        let settled: Keyshare
        do { settled = try await reconcileKeyshare(keyId: keyId) } catch {
            if case .abortedKeyshare = error { throw error }
            throw .reconcileRequired(keyId: keyId)
        }
        // A refresh that was rolled back leaves the previous generation: the operation failed.
        if let previous, settled.generation == previous.generation { throw .abortProtocol(party: nil) }
        return settled
    }
}
