/// The times (ms) of the most recent events of one client, at most `limit` of them: enough to tell
/// whether `limit` events fell within the last `window` ms, and when the oldest of them leaves it.
struct EventWindow: Sendable {
    private(set) var times: [UInt64] = []

    /// Drops events older than `window` ms before `now`.
    mutating func forget(olderThan window: UInt64, now: UInt64) {
        let cutoff = now >= window ? now - window : 0
        if let firstKept = times.firstIndex(where: { $0 > cutoff }) {
            if firstKept > 0 { times.removeFirst(firstKept) }
        } else {
            times.removeAll()
        }
    }

    /// Milliseconds until fewer than `limit` events lie within the window, or nil when that is already so.
    func wait(limit: Int, window: UInt64, now: UInt64) -> UInt64? {
        let cutoff = now >= window ? now - window : 0
        let recent = times.filter { $0 > cutoff }
        guard limit > 0, recent.count >= limit else { return nil }
        // Once this one is older than the window, fewer than `limit` remain.
        let leaving = recent[recent.count - limit]
        return leaving + window - now
    }

    /// Records an event, keeping the newest `limit`.
    mutating func record(now: UInt64, limit: Int) {
        times.append(now)
        if times.count > limit { times.removeFirst(times.count - limit) }
    }

    var isEmpty: Bool { times.isEmpty }
}
