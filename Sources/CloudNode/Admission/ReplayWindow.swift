import SessionEngine

/// The SETUP timestamp window and replay store (`docs/protocol/session.md` §9.6) as a pure value: the caller
/// passes the current time (ms since the Unix epoch) to every call; nothing reads a clock.
///
/// A production node keeps the store in its database (a unique-key insert shared by the cluster); this
/// in-memory form serves one process and tests, and defines the semantics the database must match.
package struct ReplayWindow: Sendable {
    /// Accepted timestamp skew (±), milliseconds (30–600 s).
    package let windowMilliseconds: UInt64
    /// How long an `instance_id` stays in the store: 2 × window + the longest step.
    package var retentionMilliseconds: UInt64 { 2 * windowMilliseconds + SessionConstants.longestStepMilliseconds }

    /// instance_id → time it may be forgotten.
    private var entries: [InstanceID: UInt64] = [:]
    /// Insertion order with expiry, so pruning is amortized O(1) per insert (expiries are ascending
    /// when `now` is; an out-of-order clock only delays forgetting, `contains` still checks expiry).
    private var queue: [(expiry: UInt64, id: InstanceID)] = []
    private var queueHead = 0

    /// A window of `windowMilliseconds` (default 120 s); outside 30–600 s is a configuration error.
    package init(windowMilliseconds: UInt64 = SessionConstants.defaultTimestampWindowMilliseconds) throws(SessionError) {
        guard (SessionConstants.minimumTimestampWindowMilliseconds...SessionConstants.maximumTimestampWindowMilliseconds)
            .contains(windowMilliseconds)
        else { throw .invalidConfiguration(.timestampWindow) }
        self.windowMilliseconds = windowMilliseconds
    }

    /// Whether `|timestamp − now| ≤ window` (no overflow for any inputs).
    package func isFresh(timestamp: UInt64, now: UInt64) -> Bool {
        let skew = timestamp > now ? timestamp - now : now - timestamp
        return skew <= windowMilliseconds
    }

    /// STALE_TIMESTAMP unless fresh.
    package func checkFresh(timestamp: UInt64, now: UInt64) throws(SessionError) {
        guard isFresh(timestamp: timestamp, now: now) else { throw .detected(.staleTimestamp, blamed: nil) }
    }

    /// Inserts `instanceID` (after pruning expired entries); REPLAY if it is still in the store.
    package mutating func insert(_ instanceID: InstanceID, now: UInt64) throws(SessionError) {
        prune(now: now)
        guard !contains(instanceID, now: now) else { throw .detected(.replay, blamed: nil) }
        let (sum, overflow) = now.addingReportingOverflow(retentionMilliseconds)
        let expiry = overflow ? .max : sum
        entries[instanceID] = expiry
        queue.append((expiry, instanceID))
    }

    /// Whether the store holds `instanceID` at `now`.
    package func contains(_ instanceID: InstanceID, now: UInt64) -> Bool {
        guard let expiry = entries[instanceID] else { return false }
        return now < expiry
    }

    /// Forgets entries whose retention has passed.
    package mutating func prune(now: UInt64) {
        while queueHead < queue.count, queue[queueHead].expiry <= now {
            let (expiry, id) = queue[queueHead]
            if entries[id] == expiry { entries[id] = nil }
            queueHead += 1
        }
        if queueHead > 1024 && queueHead * 2 > queue.count {
            queue.removeFirst(queueHead)
            queueHead = 0
        }
    }

    /// Entries held (including not-yet-pruned expired ones).
    package var count: Int { entries.count }
}
