/// The limits a cluster shares (`docs/protocol/session.md` §9.5, proposal P5). Each method counts in this
/// process's memory as before and, with a ``NodeRateLimiter/cluster``, in the node's database, so N
/// processes on one database admit each limit once, not N times. Without a cluster they are the
/// in-memory limits.
///
/// A database failure never crashes the node and never turns a limit off:
/// * checks before admitting a session (failed device signatures, key creations) fail **closed** —
///   `nil` verdict, which the step runner answers with STORAGE_FAILURE (the session needs the same
///   database for its replay record and its commit, so it could not succeed anyway);
/// * recording a failure (device signature, authentication) and the address check before a token
///   fail **open to this process's count**: the in-memory count still applies (the limit degrades to
///   per process, as without a cluster), and refusing every client while the database is away would
///   turn a database blip into an outage of the door.
/// Every failure is counted in `silentshard_node_rate_limit_store_errors_total`.
extension NodeRateLimiter {
    /// Failed device signatures of `deviceKey` from `principal`: refused while the limit's failures
    /// lie within the minute (this process's first, then the cluster's). nil: the database failed.
    package func checkDeviceAcrossCluster(_ deviceKey: [UInt8], principal: String) async -> RateLimitVerdict? {
        let local = checkDevice(deviceKey, principal: principal)
        let limit = limits.failedDeviceSignaturesPerMinute
        guard local == .allowed, limit > 0, let cluster else { return local }
        let bucket = ClusterRateLimits.deviceBucket(deviceKey, principal: principal)
        switch await cluster.run({ store, now throws(NodeStoreError) in
            try store.rateEventWait(bucket, limit: limit, windowMilliseconds: Self.minute, nowMilliseconds: now)
        }) {
        case .success(nil): return .allowed
        case .success(let wait?): return refused(.deviceFailuresPerMinute, retryAfterMilliseconds: wait)
        case .failure:
            noteStoreError()
            return nil
        }
    }

    /// A SETUP naming `deviceKey` from `principal` carried a signature that did not verify.
    package func recordDeviceSignatureFailure(_ deviceKey: [UInt8], principal: String) async {
        deviceSignatureFailed(deviceKey, principal: principal)
        let limit = limits.failedDeviceSignaturesPerMinute
        guard limit > 0, let cluster else { return }
        let bucket = ClusterRateLimits.deviceBucket(deviceKey, principal: principal)
        if case .failure = await cluster.run({ store, now throws(NodeStoreError) in
            try store.recordRateEvent(bucket, limit: limit, windowMilliseconds: Self.minute, nowMilliseconds: now)
        }) {
            noteStoreError()
        }
    }

    /// Whether `principal` may start a keygen, import or hard derivation now; an allowed one is counted. With a cluster,
    /// counted only in the database (one atomic check-and-insert for the whole cluster). nil: the
    /// database failed.
    package func startKeyCreationAcrossCluster(principal: String) async -> RateLimitVerdict? {
        let limit = limits.keyCreationsPerPrincipalPerHour
        guard limit > 0, let cluster else { return startKeyCreation(principal: principal) }
        let bucket = ClusterRateLimits.keyCreationBucket(principal)
        switch await cluster.run({ store, now throws(NodeStoreError) in
            try store.admitRateEvent(bucket, limit: limit, windowMilliseconds: Self.hour, nowMilliseconds: now)
        }) {
        case .success(nil): return .allowed
        case .success(let wait?): return refused(.keyCreationsPerHour, retryAfterMilliseconds: wait)
        case .failure:
            noteStoreError()
            return nil
        }
    }

    /// A token from `address` was refused. The failure that reaches
    /// ``NodeRateLimits/failedAuthenticationsPerMinute`` within a minute — in this process or in the
    /// cluster — blocks the address for ``NodeRateLimits/blockSeconds`` in every process.
    package func recordAuthenticationFailure(from address: String) async {
        authenticationFailed(from: address)
        let limit = limits.failedAuthenticationsPerMinute
        guard limit > 0, let cluster else { return }
        let bucket = ClusterRateLimits.authenticationBucket(address)
        let block = UInt64(max(0, limits.blockSeconds)) * 1000
        switch await cluster.run({ store, now throws(NodeStoreError) -> Bool in
            guard try store.recordRateEvent(bucket, limit: limit, windowMilliseconds: Self.minute, nowMilliseconds: now) >= limit
            else { return false }
            try store.blockRateBucket(bucket, untilMilliseconds: now + block, nowMilliseconds: now)
            return true
        }) {
        case .success(true): blockLocally(address, forMilliseconds: block, counted: !isBlockedLocally(address))
        case .success(false): break
        case .failure: noteStoreError()
        }
    }

    /// Whether `address` is blocked for failed authentications anywhere in the cluster (asked before
    /// a token is verified). A cluster block found is copied into this process, so the door
    /// (``openConnection(from:)``, ``checkAddress(_:)``) refuses the address without I/O from then on.
    package func checkAddressAcrossCluster(_ address: String) async -> RateLimitVerdict {
        let local = checkAddress(address)
        guard local == .allowed, limits.failedAuthenticationsPerMinute > 0, let cluster else { return local }
        let bucket = ClusterRateLimits.authenticationBucket(address)
        switch await cluster.run({ store, now throws(NodeStoreError) in
            try store.rateBlockWait(bucket, nowMilliseconds: now)
        }) {
        case .success(nil): return .allowed
        case .success(let wait?):
            blockLocally(address, forMilliseconds: wait, counted: false)
            return refused(.blockedAddress, retryAfterMilliseconds: wait)
        case .failure:
            noteStoreError()
            return .allowed
        }
    }
}
