import SessionEngine

/// Refused requests per principal and per client address (`docs/protocol/session.md` §9.5, security review 2,
/// findings 4 and 7): failed device signatures of any device key, refused preSignFinal / PRESIG_QUERY POSTs and
/// refused duo export POSTs all count in one window per principal and one per address, so neither rotating
/// random device keys nor asking for random presignature or key ids goes on for free. Past
/// ``NodeRateLimits/failedRequestsPerMinute`` within a minute, every request of that principal or address is
/// refused with RATE_LIMITED before anything is verified or written (no count either: a full window stays as it is).
///
/// Counted like the failed device signatures: in this process's memory and, with a cluster, in the node's
/// database (`rate_events`, at most the limit's rows per bucket). The check before a request fails closed
/// (nil: the caller answers STORAGE_FAILURE); recording a failure fails open to this process's count.
extension NodeRateLimiter {
    /// What a refusal of `principal` at `address` counts against: the principal's ``Principal/rateLimitKey``
    /// unless it is a subject every client shares and no address was known to count it under (trio B without
    /// a forwarded address), and the address when known.
    static func refusalEntries(principal: Principal?, address: String?) -> [String] {
        var entries: [String] = []
        if let principal, principal.identifiesSubject || principal.rateLimitKey != principal.subject {
            entries.append("principal\u{0}" + principal.rateLimitKey)
        }
        if let address, !address.isEmpty { entries.append("address\u{0}" + address) }
        return entries
    }

    /// RATE_LIMITED (the verdict) while `principal` or `address` has the limit's refusals within the minute,
    /// in this process or the cluster. nil: the database failed.
    package func checkRequestFailures(principal: Principal?, address: String?) async -> RateLimitVerdict? {
        let limit = limits.failedRequestsPerMinute
        guard limit > 0 else { return .allowed }
        let entries = Self.refusalEntries(principal: principal, address: address)
        for entry in entries {
            let local = checkFailures(entry: Self.requestEntry(entry), limit: limit, refusal: .requestFailuresPerMinute)
            if local != .allowed { return local }
        }
        guard let cluster, !entries.isEmpty else { return .allowed }
        let buckets = entries.map(ClusterRateLimits.requestFailureBucket)
        switch await cluster.run({ store, now throws(NodeStoreError) -> UInt64? in
            var longest: UInt64?
            for bucket in buckets {
                if let wait = try store.rateEventWait(bucket, limit: limit, windowMilliseconds: Self.minute, nowMilliseconds: now) {
                    longest = max(longest ?? 0, wait)
                }
            }
            return longest
        }) {
        case .success(nil): return .allowed
        case .success(let wait?): return refused(.requestFailuresPerMinute, retryAfterMilliseconds: wait)
        case .failure:
            noteStoreError()
            return nil
        }
    }

    /// One refused request of `principal` at `address` (counted against both).
    package func recordRequestFailure(principal: Principal?, address: String?) async {
        let limit = limits.failedRequestsPerMinute
        guard limit > 0 else { return }
        let entries = Self.refusalEntries(principal: principal, address: address)
        for entry in entries { recordFailure(entry: Self.requestEntry(entry), limit: limit) }
        guard let cluster, !entries.isEmpty else { return }
        let buckets = entries.map(ClusterRateLimits.requestFailureBucket)
        if case .failure = await cluster.run({ store, now throws(NodeStoreError) in
            for bucket in buckets {
                try store.recordRateEvent(bucket, limit: limit, windowMilliseconds: Self.minute, nowMilliseconds: now)
            }
        }) {
            noteStoreError()
        }
    }

    /// The in-memory entry of a refusal window (apart from the (principal, device key) entries).
    private static func requestEntry(_ entry: String) -> String { "request\u{0}" + entry }
}

extension ClusterRateLimits {
    /// The bucket of refused requests of one principal or address (``NodeRateLimiter/refusalEntries(principal:address:)``).
    static func requestFailureBucket(_ entry: String) -> RateBucket { RateBucket(kind: "request-failures", key: entry) }
}

extension NodeRateLimiter {
    /// Whether a refusal with `code` counts against the client (``recordRequestFailure(principal:address:)``):
    /// every refusal except the node's own trouble (storage, internal, an unreachable peer), a rate limit, and the
    /// answers that come from the key's state rather than the request (STALE_GENERATION, NODE_BEHIND: an honest app
    /// behind a refresh, or a node restored behind it, must not lock out its address; review of finding 4),
    /// nor KEY_BUSY: the node's own lease, which the app retries up to 5 times (session.md §13.8 item 6, POST retry
    /// audit L3), so one call would cost up to 6 refusals.
    static func countsAgainstClient(_ code: WireCode) -> Bool {
        switch code {
        case .storageFailure, .internalError, .peerUnavailable, .rateLimited, .staleGeneration, .nodeBehind, .keyBusy: false
        default: true
        }
    }
}
