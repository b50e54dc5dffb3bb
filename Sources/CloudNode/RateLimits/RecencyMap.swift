/// A dictionary that remembers the order its entries were last touched in, for the per-client
/// counters of ``NodeRateLimiter`` (second review finding 10). Every operation is O(1) (amortized):
/// * a touched entry moves to the newest end, so the oldest end holds the least recently seen;
/// * at ``capacity`` a new key evicts the least recently seen one, so a flood of new clients pushes
///   out old ones instead of going uncounted;
/// * ``removeOldest(while:limit:)`` looks at the oldest end only, so the limiter forgets clients whose
///   window has passed a few at a time on each call instead of in one pass over every client.
struct RecencyMap<Value> {
    private struct Node {
        var key: String
        var value: Value
        /// When the entry was last touched (ms; never decreases from the oldest end to the newest).
        var touched: UInt64
        var older: Int
        var newer: Int
    }

    /// Most entries kept.
    let capacity: Int
    private var nodes: [Node?] = []
    private var free: [Int] = []
    private var index: [String: Int] = [:]
    private var oldest = -1
    private var newest = -1
    /// Entries looked at by ``removeOldest(while:limit:)`` so far (tests of its cost).
    private(set) var examined = 0

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    var count: Int { index.count }
    var isEmpty: Bool { index.isEmpty }

    subscript(key: String) -> Value? {
        guard let slot = index[key] else { return nil }
        return nodes[slot]?.value
    }

    /// Sets `key`'s value and marks it the most recently seen (at `now`). A new key past ``capacity``
    /// evicts the least recently seen entry first.
    mutating func set(_ key: String, _ value: Value, now: UInt64) {
        if let slot = index[key] {
            unlink(slot)
            nodes[slot]?.value = value
            nodes[slot]?.touched = now
            linkNewest(slot)
            return
        }
        if index.count >= capacity, oldest >= 0, let evicted = nodes[oldest]?.key { removeValue(forKey: evicted) }
        let node = Node(key: key, value: value, touched: now, older: -1, newer: -1)
        let slot: Int
        if let reused = free.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        index[key] = slot
        linkNewest(slot)
    }

    /// Removes `key`'s entry, if any.
    mutating func removeValue(forKey key: String) {
        guard let slot = index.removeValue(forKey: key) else { return }
        unlink(slot)
        nodes[slot] = nil
        free.append(slot)
    }

    /// Removes entries from the least recently seen end while `expired(value, touched)` holds, at most
    /// `limit` of them; stops at the first that does not.
    mutating func removeOldest(limit: Int, while expired: (Value, UInt64) -> Bool) {
        var removed = 0
        while removed < limit, oldest >= 0, let node = nodes[oldest] {
            examined += 1
            guard expired(node.value, node.touched) else { return }
            removeValue(forKey: node.key)
            removed += 1
        }
    }

    private mutating func unlink(_ slot: Int) {
        guard let node = nodes[slot] else { return }
        if node.older >= 0 { nodes[node.older]?.newer = node.newer } else { oldest = node.newer }
        if node.newer >= 0 { nodes[node.newer]?.older = node.older } else { newest = node.older }
        nodes[slot]?.older = -1
        nodes[slot]?.newer = -1
    }

    private mutating func linkNewest(_ slot: Int) {
        nodes[slot]?.older = newest
        nodes[slot]?.newer = -1
        if newest >= 0 { nodes[newest]?.newer = slot } else { oldest = slot }
        newest = slot
    }
}
