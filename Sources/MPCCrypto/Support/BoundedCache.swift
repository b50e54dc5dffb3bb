
/// A small thread-safe memo table for pure functions on hot paths (validated public-key encodings,
/// Lagrange coefficients, decoded keyshares at a node). At most `capacity` entries; the oldest entry
/// is evicted first. A hit returns exactly what the function computed for the same key, so a cache
/// never changes a result, only its cost.
///
/// Lookups and inserts take a lock; the value is computed outside it (two threads may compute the
/// same entry once each, which is harmless for a pure function).
package final class BoundedCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct Storage {
        var values: [Key: Value] = [:]
        /// Insertion order, for eviction: keys[head...] then keys[..<head] are oldest to newest.
        var order: [Key] = []
        var head = 0
    }

    private let storage = LockedValue(Storage())
    /// The most entries kept.
    package let capacity: Int

    package init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// The cached value for `key`, if any.
    package func value(for key: Key) -> Value? {
        storage.withLock { $0.values[key] }
    }

    /// Stores `value` for `key`, evicting the oldest entry when full.
    package func insert(_ value: Value, for key: Key) {
        storage.withLock { storage in
            guard storage.values.updateValue(value, forKey: key) == nil else { return }
            if storage.order.count < capacity {
                storage.order.append(key)
            } else {
                storage.values[storage.order[storage.head]] = nil
                storage.order[storage.head] = key
                storage.head = (storage.head + 1) % capacity
            }
        }
    }

    /// The cached value for `key`, or `compute()`'s result, which is then cached. Errors are not cached.
    package func value<Failure: Error>(for key: Key, orCompute compute: () throws(Failure) -> Value) throws(Failure) -> Value {
        if let cached = value(for: key) { return cached }
        let value = try compute()
        insert(value, for: key)
        return value
    }

    /// The number of entries (for tests).
    package var count: Int { storage.withLock { $0.values.count } }

    /// Drops every entry.
    package func removeAll() {
        storage.withLock { $0 = Storage() }
    }
}
