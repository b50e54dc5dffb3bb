import SilentShardCore

/// Admission of a validated SETUP at any node — duo, trio A, trio B — in one order (issue 18's pipeline):
///
/// 1. durable replay (session.md §9.6): the instance id into the node's database, shared by every process on it
///    and kept across restarts (REPLAY; a store failure is STORAGE_FAILURE);
/// 2. authorization (session.md §9.1–9.3): the mode's rule, given as `authorize`;
/// 3. rate limits (session.md §9.5): key creations (shared by the cluster through the node's database when the
///    limiter has one), signing sessions per key (failed device signatures and refused requests were checked
///    before the SETUP was verified, `NodeStepRunner.validateSetup`);
/// 4. the key's lease (session.md §7.2): one share-changing session or reconcile per key (KEY_BUSY).
///
/// Key state and bans (SETUP steps 9–10) follow in the runner, under the lease. Every stage refuses with a
/// `SetupRejection` and nothing taken by earlier stages stays held: ``Admitted/end()`` gives back what
/// an admitted step holds.
struct NodeAdmission: Sendable {
    let store: NodeShareStore
    let queue: NodeStoreQueues
    let rateLimiter: NodeRateLimiter?
    let leaseSeconds: Int64
    /// How long accepted instance ids are kept (2 × the timestamp window + the longest step).
    let replayRetentionMilliseconds: UInt64

    /// What an admitted step holds until it ends.
    struct Admitted<Authorization: Sendable>: Sendable {
        let authorization: Authorization
        /// The key whose signing-session count this step holds (session.md §9.5), if any.
        let signingKeyID: String?
        let lease: KeyLease?
        let admission: NodeAdmission

        /// Gives back the signing-session place and the lease, and returns once the lease row is gone.
        func finish() async {
            if let signingKeyID { admission.rateLimiter?.endSigning(keyID: signingKeyID) }
            await lease?.release(store: admission.store, queue: admission.queue)
        }

        /// Gives back the signing-session place at once and the lease (queued: it may be called from
        /// `defer`, which cannot await; the release is idempotent and drops only this session's row).
        func end() {
            if let signingKeyID { admission.rateLimiter?.endSigning(keyID: signingKeyID) }
            guard let lease else { return }
            let (store, queue) = (admission.store, admission.queue)
            Task { await lease.release(store: store, queue: queue) }
        }
    }

    /// Runs the stages for `setup`; `rateLimitKey` is what session.md §9.5 counts the principal as.
    func admit<Authorization: Sendable>(
        _ setup: ValidatedSetup, now: UInt64, rateLimitKey: String,
        authorize: () async throws(SetupRejection) -> Authorization
    ) async throws(SetupRejection) -> Admitted<Authorization> {
        try await recordInstance(setup, now: now)
        let authorization = try await authorize()
        let signingKeyID = try await rateLimiter?.admit(setup, principal: rateLimitKey) ?? nil
        let lease: KeyLease?
        do {
            lease = try await KeyLease.acquire(for: setup, seconds: leaseSeconds, store: store, queue: queue)
        } catch {
            if let signingKeyID { rateLimiter?.endSigning(keyID: signingKeyID) }
            throw error
        }
        return Admitted(authorization: authorization, signingKeyID: signingKeyID, lease: lease, admission: self)
    }

    /// session.md §9.6: the durable replay store, after the in-memory window passed the SETUP.
    func recordInstance(_ setup: ValidatedSetup, now: UInt64) async throws(SetupRejection) {
        let (store, instance, retention) = (store, setup.instanceID, replayRetentionMilliseconds)
        do {
            try await queue.run { () throws(NodeStoreError) in
                try store.recordSessionInstance(instance, nowMilliseconds: now, retentionMilliseconds: retention)
            }
        } catch .replay {
            throw SetupRejection(.replay)
        } catch {
            throw SetupRejection(.storageFailure)
        }
    }
}
