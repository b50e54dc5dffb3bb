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

    /// The app's decision of §7.3 from the nodes' signed `key_status` blocks.
    func runReconcile(_ context: ReconcileContext, nodes: [PartyIndex], channel: inout PartyFrameChannel,
                      send: SessionDriver.Send, read: SessionDriver.Read) async throws(SilentShardError) -> Keyshare {
        var statuses: [KeyStatus] = []
        for node in nodes {
            guard let status = channel.receiver.accepts[node]?.keyStatus else { throw .protocolViolation(party: .node(node)) }
            statuses.append(status)
        }
        let keyId = context.storageKeyId
        let currentGen = context.current.map { [UInt8]($0.generation) }
        func control(_ kind: FrameKind, _ payload: [UInt8]) async throws(SilentShardError) {
            try await send([try channel.control(kind, payload: payload)])
        }
        guard let staged = context.staged else {
            guard let current = context.current, statuses.allSatisfy({ $0.currentGen == currentGen }) else { throw .staleKeyshare }
            // A PREPARED generation no node committed and the app never staged (the app stopped before
            // staging, or its ABORT was lost) is rolled back, so share changes are possible again.
            let orphans = Set(statuses.compactMap { $0.prepared?.gen }.filter { $0 != currentGen })
            guard let orphan = orphans.first else {
                try await control(.done, DonePayload.none.encoded)
                return current
            }
            guard orphans.count == 1 else { throw .reconcileConflict(keyId: keyId) }
            try await control(.abort, AbortPayload(code: .rollback, blamed: nil, rollback: (current.keyIdBytes, orphan)).encoded)
            let outcomes = try await collectOutcomes(nodes: nodes, channel: &channel, read: read)
            guard outcomes.allSatisfy({ $0.outcome == .aborted }) else { throw .reconcileConflict(keyId: keyId) }
            return current
        }
        let g = [UInt8](staged.keyshare.generation), d = staged.digest, keyID = staged.keyshare.keyIdBytes
        if statuses.allSatisfy({ $0.currentGen == g }) {
            try await control(.done, DonePayload.none.encoded)
            do { try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            return staged.keyshare
        }
        let holds = statuses.allSatisfy { $0.currentGen == g || ($0.prepared?.gen == g && $0.prepared?.digest == d) }
        if holds {
            // Roll forward: nodes with PREPARED g commit on the app's COMMIT (no READY needed).
            try await control(.commit, CommitPayload(keyID: keyID, gen: g, digest: d, context: .reconcile).encoded)
            let outcomes = try await collectOutcomes(nodes: nodes, channel: &channel, read: read)
            guard outcomes.allSatisfy({ $0.outcome == .committed && $0.currentGen == g }) else { throw .reconcileConflict(keyId: keyId) }
            do { try await storageClient.promote(keyId: keyId) } catch { throw SilentShardError(storage: error) }
            return staged.keyshare
        }
        guard statuses.allSatisfy({ $0.currentGen != g }),
              statuses.allSatisfy({ $0.currentGen == nil || $0.currentGen == currentGen })
        else { throw .reconcileConflict(keyId: keyId) }
        // Roll back: every node tombstones g and answers how g was decided.
        let rollback = AbortPayload(code: .rollback, blamed: nil, rollback: (keyID, g))
        try await control(.abort, rollback.encoded)
        let outcomes = try await collectOutcomes(nodes: nodes, channel: &channel, read: read)
        guard outcomes.allSatisfy({ $0.outcome == .aborted }) else { throw .reconcileConflict(keyId: keyId) }
        do { try await storageClient.discardStaged(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let current = context.current else { throw .abortedKeyshare(keyId: keyId) }
        return current
    }

    /// One OUTCOME from each node.
    private func collectOutcomes(nodes: [PartyIndex], channel: inout PartyFrameChannel,
                                 read: SessionDriver.Read) async throws(SilentShardError) -> [OutcomePayload] {
        var outcomes: [OutcomePayload] = []
        for node in nodes {
            let frame = try await SessionDriver.awaitControl(.outcome, from: node, channel: &channel, read: read)
            do { outcomes.append(try OutcomePayload(bytes: frame.payload)) } catch { throw SilentShardError(error, frameSender: node) }
        }
        return outcomes
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
