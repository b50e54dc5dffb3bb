import Dispatch
import MPCCrypto

/// What a limit says: go ahead, or come back after `retryAfter` seconds (REJECT `RATE_LIMITED`'s
/// `retry_after_s`, HTTP 429's `Retry-After`).
package enum RateLimitVerdict: Sendable, Equatable {
    case allowed
    case limited(retryAfter: UInt32)
}

/// Enforces ``NodeRateLimits`` (`docs/protocol/session.md` §9.5) for one node process: the server asks it about
/// client addresses, the step runners about principals, keys and device keys. Thread-safe; every
/// synchronous call is a short critical section (no I/O), so the server's service thread may call it.
///
/// With a ``cluster`` (the node's database), the limits that count events over time — failed
/// authentications per address, key creations per principal, failed device signatures per (principal,
/// device key) — are counted in the database by every process of the cluster (the `async` methods in
/// `NodeRateLimiter+Cluster`); the in-memory counts stay as a fast refusal and as the per-process
/// fallback when the database fails. Open connections and signing sessions are per process.
///
/// Memory is bounded by recent activity (second review finding 10): at most ``maximumTrackedClients``
/// addresses, principals and (principal, device key) pairs are tracked per limit, each in a
/// ``RecencyMap``; past that a new client evicts the least recently seen one (before, new clients went
/// uncounted, so a flood of addresses switched the limits off). Entries whose window has passed are
/// forgotten a few at a time from the least recently seen end on every call, in O(1) amortized (before,
/// one O(n) pass every 10 s ran on the server's service thread).
package final class NodeRateLimiter: Sendable {
    /// Why a request was refused (the `limit` label of `silentshard_node_rate_limited_total`).
    package enum Refusal: String, CaseIterable, Sendable {
        case blockedAddress = "blocked-address"
        case connectionsPerAddress = "connections-per-address"
        case keyCreationsPerHour = "key-creations-per-hour"
        case signingSessionsPerKey = "signing-sessions-per-key"
        case deviceFailuresPerMinute = "device-failures-per-minute"
        case requestFailuresPerMinute = "request-failures-per-minute"
    }

    package let limits: NodeRateLimits
    /// The cluster-shared counters, or nil: every limit per process.
    package let cluster: ClusterRateLimits?
    /// Tracked addresses (failed authentications) and (principal, device key) pairs, each.
    package static let maximumTrackedClients = 100_000

    private struct State {
        /// Open connections and signing sessions are bounded by the server's connection limit.
        var openConnections: [String: Int] = [:]
        var failedAuthentications = RecencyMap<EventWindow>(capacity: NodeRateLimiter.maximumTrackedClients)
        var blockedUntil = RecencyMap<UInt64>(capacity: NodeRateLimiter.maximumTrackedClients)
        var keyCreations = RecencyMap<EventWindow>(capacity: NodeRateLimiter.maximumTrackedClients)
        var signingSessions: [String: Int] = [:]
        var failedDeviceSignatures = RecencyMap<EventWindow>(capacity: NodeRateLimiter.maximumTrackedClients)
        var refusals: [Refusal: Int] = [:]
        var addressesBlocked = 0
        var storeErrors = 0
    }

    private let state = LockedValue(State())
    private let clock: @Sendable () -> UInt64
    static let minute: UInt64 = 60_000
    static let hour: UInt64 = 3_600_000
    /// Expired entries forgotten per map and call, at most (the sweep's cost per call).
    static let sweepBatch = 8

    /// - Parameters:
    ///   - clock: monotonic milliseconds for the in-memory counts (tests pass their own).
    ///   - cluster: the cluster-shared counters (the node's database); nil: all in memory.
    package init(limits: NodeRateLimits = .standard,
                clock: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds / 1_000_000 },
                cluster: ClusterRateLimits? = nil) {
        self.limits = limits
        self.clock = clock
        self.cluster = cluster
    }

    // MARK: Client addresses (the server)

    /// Whether `address` may open one more WebSocket: refused while it is blocked for failed
    /// authentications or has ``NodeRateLimits/connectionsPerAddress`` open. An allowed connection is
    /// counted until ``connectionClosed(from:)``.
    package func openConnection(from address: String) -> RateLimitVerdict {
        let now = clock()
        return state.withLock { state in
            sweep(&state, now: now)
            if let wait = blockWait(state, address: address, now: now) { return Self.refuse(&state, .blockedAddress, wait) }
            let open = state.openConnections[address, default: 0]
            if limits.connectionsPerAddress > 0, open >= limits.connectionsPerAddress {
                return Self.refuse(&state, .connectionsPerAddress, 1)
            }
            state.openConnections[address] = open + 1
            return .allowed
        }
    }

    /// A connection ``openConnection(from:)`` allowed has ended.
    package func connectionClosed(from address: String) {
        state.withLock { state in
            guard let open = state.openConnections[address] else { return }
            state.openConnections[address] = open > 1 ? open - 1 : nil
        }
    }

    /// How many connections (WebSockets and POSTs in progress) are counted against `address` now.
    package func openConnections(from address: String) -> Int {
        state.withLock { $0.openConnections[address, default: 0] }
    }

    /// Whether `address` is blocked for failed authentications (HTTP requests ask this).
    package func checkAddress(_ address: String) -> RateLimitVerdict {
        let now = clock()
        return state.withLock { state in
            blockWait(state, address: address, now: now).map { Self.refuse(&state, .blockedAddress, $0) } ?? .allowed
        }
    }

    /// A token from `address` was refused. The failure that reaches
    /// ``NodeRateLimits/failedAuthenticationsPerMinute`` within a minute blocks the address for
    /// ``NodeRateLimits/blockSeconds``.
    package func authenticationFailed(from address: String) {
        let limit = limits.failedAuthenticationsPerMinute
        guard limit > 0 else { return }
        let now = clock()
        state.withLock { state in
            sweep(&state, now: now)
            guard Self.recordFailure(&state.failedAuthentications, address, limit: limit, now: now) >= limit else { return }
            state.blockedUntil.set(address, now + UInt64(limits.blockSeconds) * 1000, now: now)
            state.failedAuthentications.removeValue(forKey: address)
            state.addressesBlocked += 1
        }
    }

    // MARK: Principals, keys, device keys (the step runners)

    /// Whether `principal` may start a keygen, import or hard derivation now; an allowed one is counted.
    package func startKeyCreation(principal: String) -> RateLimitVerdict {
        let limit = limits.keyCreationsPerPrincipalPerHour
        guard limit > 0 else { return .allowed }
        let now = clock()
        return state.withLock { state in
            sweep(&state, now: now)
            var window = state.keyCreations[principal] ?? EventWindow()
            window.forget(olderThan: Self.hour, now: now)
            if let wait = window.wait(limit: limit, window: Self.hour, now: now) {
                return Self.refuse(&state, .keyCreationsPerHour, Self.seconds(wait))
            }
            window.record(now: now, limit: limit)
            state.keyCreations.set(principal, window, now: now)
            return .allowed
        }
    }

    /// Whether one more signing or presigning session may run on `keyID`; an allowed one holds its
    /// place until ``endSigning(keyID:)``.
    package func startSigning(keyID: String) -> RateLimitVerdict {
        let limit = limits.signingSessionsPerKey
        guard limit > 0 else { return .allowed }
        return state.withLock { state in
            let running = state.signingSessions[keyID, default: 0]
            guard running < limit else { return Self.refuse(&state, .signingSessionsPerKey, 1) }
            state.signingSessions[keyID] = running + 1
            return .allowed
        }
    }

    /// A session ``startSigning(keyID:)`` allowed has ended.
    package func endSigning(keyID: String) {
        guard limits.signingSessionsPerKey > 0 else { return }
        state.withLock { state in
            guard let running = state.signingSessions[keyID] else { return }
            state.signingSessions[keyID] = running > 1 ? running - 1 : nil
        }
    }

    /// Whether SETUPs of `deviceKey` (its identity bytes) from `principal` are refused for failed device signatures.
    package func checkDevice(_ deviceKey: [UInt8], principal: String) -> RateLimitVerdict {
        let limit = limits.failedDeviceSignaturesPerMinute
        guard limit > 0 else { return .allowed }
        let now = clock()
        return state.withLock { state in
            // Every session asks; almost always nothing is tracked, so skip building the entry's key.
            guard !state.failedDeviceSignatures.isEmpty,
                  let window = state.failedDeviceSignatures[Self.deviceEntry(deviceKey, principal)],
                  let wait = window.wait(limit: limit, window: Self.minute, now: now)
            else { return .allowed }
            return Self.refuse(&state, .deviceFailuresPerMinute, Self.seconds(wait))
        }
    }

    /// A SETUP naming `deviceKey` carried a signature that did not verify.
    package func deviceSignatureFailed(_ deviceKey: [UInt8], principal: String) {
        let limit = limits.failedDeviceSignaturesPerMinute
        guard limit > 0 else { return }
        let now = clock()
        let entry = Self.deviceEntry(deviceKey, principal)
        state.withLock { state in
            sweep(&state, now: now)
            _ = Self.recordFailure(&state.failedDeviceSignatures, entry, limit: limit, now: now)
        }
    }

    /// Whether the failure window `entry` (of the failed-signature table) holds `limit` failures of the last
    /// minute; `NodeRateLimiter+Refusals` keeps the per-principal and per-address refusals there too.
    func checkFailures(entry: String, limit: Int, refusal: Refusal) -> RateLimitVerdict {
        guard limit > 0 else { return .allowed }
        let now = clock()
        return state.withLock { state in
            guard !state.failedDeviceSignatures.isEmpty, let window = state.failedDeviceSignatures[entry],
                  let wait = window.wait(limit: limit, window: Self.minute, now: now)
            else { return .allowed }
            return Self.refuse(&state, refusal, Self.seconds(wait))
        }
    }

    /// Records one failure in the window `entry` (see ``checkFailures(entry:limit:refusal:)``).
    func recordFailure(entry: String, limit: Int) {
        guard limit > 0 else { return }
        let now = clock()
        state.withLock { state in
            sweep(&state, now: now)
            _ = Self.recordFailure(&state.failedDeviceSignatures, entry, limit: limit, now: now)
        }
    }

    // MARK: Metrics

    /// Refusals so far, by limit.
    package func refusals(_ refusal: Refusal) -> Int { state.withLock { $0.refusals[refusal, default: 0] } }

    /// Database failures of the cluster-shared counters so far.
    package var storeErrors: Int { state.withLock { $0.storeErrors } }

    /// Prometheus lines for `GET /metrics`: refusals by limit, addresses blocked (no addresses or principals).
    package func metricsText() -> String {
        let (refusals, blocked, storeErrors) = state.withLock { ($0.refusals, $0.addressesBlocked, $0.storeErrors) }
        var out = "# HELP silentshard_node_rate_limited_total Requests refused by a rate limit (session.md 9.5), by limit.\n"
            + "# TYPE silentshard_node_rate_limited_total counter\n"
        for refusal in Refusal.allCases {
            out += "silentshard_node_rate_limited_total{limit=\"\(refusal.rawValue)\"} \(refusals[refusal, default: 0])\n"
        }
        out += "# HELP silentshard_node_addresses_blocked_total Client addresses blocked for failed authentications.\n"
            + "# TYPE silentshard_node_addresses_blocked_total counter\nsilentshard_node_addresses_blocked_total \(blocked)\n"
        if cluster != nil {
            out += "# HELP silentshard_node_rate_limit_store_errors_total Database failures of the cluster-shared rate limits.\n"
                + "# TYPE silentshard_node_rate_limit_store_errors_total counter\n"
                + "silentshard_node_rate_limit_store_errors_total \(storeErrors)\n"
        }
        return out
    }

    // MARK: For the cluster-shared counters (NodeRateLimiter+Cluster)

    /// Counts a refusal the cluster's counters decided.
    func refused(_ refusal: Refusal, retryAfterMilliseconds wait: UInt64) -> RateLimitVerdict {
        state.withLock { Self.refuse(&$0, refusal, Self.seconds(wait)) }
    }

    /// Counts a database failure of the cluster's counters.
    func noteStoreError() { state.withLock { $0.storeErrors += 1 } }

    /// Blocks `address` in this process for `wait` ms (a block the cluster decided; a later block stays).
    /// `counted`: this process decided it (counted in `silentshard_node_addresses_blocked_total`).
    func blockLocally(_ address: String, forMilliseconds wait: UInt64, counted: Bool) {
        let now = clock()
        let until = now.addingReportingOverflow(wait).partialValue
        state.withLock { state in
            if let current = state.blockedUntil[address], current >= until { return }
            state.blockedUntil.set(address, until, now: now)
            state.failedAuthentications.removeValue(forKey: address)
            if counted { state.addressesBlocked += 1 }
        }
    }

    /// Whether this process blocked `address` itself already (no need to ask the database).
    func isBlockedLocally(_ address: String) -> Bool {
        let now = clock()
        return state.withLock { blockWait($0, address: address, now: now) != nil }
    }

    // MARK: Internals

    private static func refuse(_ state: inout State, _ refusal: Refusal, _ retryAfter: UInt32) -> RateLimitVerdict {
        state.refusals[refusal, default: 0] += 1
        return .limited(retryAfter: retryAfter)
    }

    /// Entries kept (for tests of the memory bound).
    var trackedEntries: Int {
        state.withLock { state in
            state.openConnections.count + state.failedAuthentications.count + state.blockedUntil.count
                + state.keyCreations.count + state.signingSessions.count + state.failedDeviceSignatures.count
        }
    }

    private static func deviceEntry(_ deviceKey: [UInt8], _ principal: String) -> String {
        principal + "\u{0}" + Hex.encode(deviceKey)
    }

    private static func seconds(_ milliseconds: UInt64) -> UInt32 {
        UInt32(clamping: max(1, (milliseconds + 999) / 1000))
    }

    /// Records a failure of `key` in its minute window (a new key past `maximumTrackedClients` evicts the
    /// least recently seen one); returns the failures now in it.
    private static func recordFailure(_ windows: inout RecencyMap<EventWindow>, _ key: String, limit: Int, now: UInt64) -> Int {
        var window = windows[key] ?? EventWindow()
        window.forget(olderThan: minute, now: now)
        window.record(now: now, limit: limit)
        windows.set(key, window, now: now)
        return window.times.count
    }

    private func blockWait(_ state: State, address: String, now: UInt64) -> UInt32? {
        guard let until = state.blockedUntil[address], until > now else { return nil }
        return Self.seconds(until - now)
    }

    /// Forgets, from the least recently seen end of each map, windows with no event inside them and
    /// blocks that ended: at most ``sweepBatch`` per map and call, stopping at the first live entry, so
    /// each call costs O(1) amortized (every entry is removed at most once after it was set).
    private func sweep(_ state: inout State, now: UInt64) {
        let (minuteAgo, hourAgo) = (now >= Self.minute ? now - Self.minute : 0, now >= Self.hour ? now - Self.hour : 0)
        state.blockedUntil.removeOldest(limit: Self.sweepBatch) { until, _ in until <= now }
        state.failedAuthentications.removeOldest(limit: Self.sweepBatch) { window, _ in (window.times.last ?? 0) <= minuteAgo }
        state.failedDeviceSignatures.removeOldest(limit: Self.sweepBatch) { window, _ in (window.times.last ?? 0) <= minuteAgo }
        state.keyCreations.removeOldest(limit: Self.sweepBatch) { window, _ in (window.times.last ?? 0) <= hourAgo }
    }
}
