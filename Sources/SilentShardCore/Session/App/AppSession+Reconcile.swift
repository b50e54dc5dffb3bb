import Foundation
import MPCCrypto
import MPCProtocols

/// Reconcile (`docs/protocol/session.md` §7.3) and the automatic in-doubt handling of §5.3, for every mode.
extension AppSession {
    /// Settles the app's record for `keyId` with the nodes, e.g. after `reconcileRequired` or at launch:
    /// a staged share the nodes committed (trio: or hold PREPARED under the same digest) is committed and
    /// promoted; one that no node committed and a node lacks is rolled back (the nodes tombstone it first,
    /// so it can never be committed later). Returns the resulting current keyshare. Idempotent.
    ///
    /// Throws `keyNotFound` without a local record, `abortedKeyshare` when the first generation of a key
    /// was rolled back, `staleKeyshare` when the nodes hold another generation than the app's current
    /// one, `reconcileConflict` for any other mix (an operator case).
    package func reconcile(keyId: String) async throws(SilentShardError) -> Keyshare {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let record else { throw .keyNotFound(keyId: keyId) }
        let mode = mode
        let current = try record.current.map { share throws(SilentShardError) in try AppStoredShare.decode(share, mode: mode) }
        let staged = try record.staged.map { share throws(SilentShardError) in try AppStoredShare.decode(share, mode: mode) }
        for share in [current, staged].compactMap({ $0 }) { try check(share.keyshare) }
        guard let reference = staged?.keyshare ?? current?.keyshare else { throw .keyNotFound(keyId: keyId) }
        let appState = AppState(currentGen: current?.keyshare.gen, staged: staged.map { ($0.keyshare.gen, $0.digest) })
        return try await step(.reconcile, action: actions.reconcile(), existing: reference, participants: allParties) { setup in
            setup.keyID = reference.keyID
            setup.appState = appState.encoded
        } body: { channel, link throws(SilentShardError) in
            try await accepted(channel: &channel, link: link)
            return try await aborting(channel: &channel, link: link) { (channel: inout PartyFrameChannel) throws(SilentShardError) in
                try await AppReconcileExecutor.settle(storageKeyId: keyId, current: current?.keyshare,
                                                      staged: staged.map { ($0.keyshare, $0.digest) },
                                                      policy: mode == .duo ? .duo : .trio, nodes: link.nodes, channel: &channel,
                                                      storage: reconcileStorage(keyId: keyId, staged: staged?.keyshare),
                                                      send: link.send, read: link.read)
            }
        }
    }

    /// The record's storage operations for reconcile; promoting `staged` offers it to the backup sink first.
    private func reconcileStorage(keyId: String, staged: Keyshare?) -> AppReconcileExecutor.Storage {
        var storage = AppReconcileExecutor.Storage(storageClient, keyId: keyId)
        if let staged { storage.promote = promoting(staged, promote: storage.promote) }
        return storage
    }

    /// session.md §5.3: before an operation on a key whose record has a staged share, reconcile first.
    package func settleIfStaged(_ keyshare: Keyshare) async throws(SilentShardError) {
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        if record?.staged != nil { _ = try await reconcile(keyId: keyshare.keyId) }
    }

    /// session.md §5.3: a share-changing step refused with RECONCILE_REQUIRED (a trio node holds PREPARED)
    /// reconciles, then retries once.
    package func retryingAfterReconcile(_ keyshare: Keyshare,
                                        _ body: () async throws(SilentShardError) -> Keyshare) async throws(SilentShardError) -> Keyshare {
        do { return try await body() } catch {
            guard case .rejected(let code, _, _, _) = error, code == WireCode.reconcileRequired.rawValue else { throw error }
            _ = try await reconcile(keyId: keyshare.keyId)
            return try await body()
        }
    }

    /// session.md §5.3 IN_DOUBT: one reconcile right away; if it does not finish, `reconcileRequired` stands.
    package func resolveInDoubt(_ error: SilentShardError, previous: Keyshare?) async throws(SilentShardError) -> Keyshare {
        guard case .reconcileRequired(let keyId) = error else { throw error }
        let settled: Keyshare
        do { settled = try await reconcile(keyId: keyId) } catch {
            if case .abortedKeyshare = error { throw error }
            throw .reconcileRequired(keyId: keyId)
        }
        // A refresh that was rolled back leaves the previous generation: the operation failed.
        if let previous, settled.generation == previous.generation { throw .abortProtocol(party: nil) }
        return settled
    }
}
