import Foundation
import MPCCrypto
import SilentShardTestSupport
import Testing
@testable import CloudNode

/// The cluster-shared session.md §9.5 counters in the node database (`NodeShareStore+RateLimits`, proposal P5): sliding
/// windows, blocks, garbage collection, and an atomic check-and-insert across store instances (each
/// its own connection, as separate processes are). Times are given, never slept.
@Suite("Node share store: cluster-shared rate-limit counters (SQLite and PostgreSQL)")
struct RateLimitStoreTests {
    static let minute: UInt64 = 60_000
    static let start: UInt64 = 1_800_000_000_000

    @Test("a sliding window: the limit's event refuses, with the wait until the oldest of them leaves", arguments: StoreBackend.allCases)
    func slidingWindow(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: try scratchLocation(backend), masterKey: .random())
        let bucket = RateBucket(kind: "test", key: "p")
        let start = Self.start
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start) == nil)
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 10_000) == nil)
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 20_000) == nil)
        // Full: the wait is until the first leaves the minute; a refusal is not counted.
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 30_000) == 30_000)
        #expect(try store.rateEventWait(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 59_999) == 1)
        // Another bucket is separate.
        #expect(try store.rateEventWait(RateBucket(kind: "test", key: "q"), limit: 1, windowMilliseconds: Self.minute,
                                        nowMilliseconds: start) == nil)
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 60_000) == nil)
        #expect(try store.admitRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: start + 60_001) == 9_999)
    }

    @Test("recorded failures keep the newest `limit` rows; a block outlasts them and is forgotten when it ends",
          arguments: StoreBackend.allCases)
    func recordsAndBlocks(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: try scratchLocation(backend), masterKey: .random())
        let bucket = RateBucket(kind: "test", key: "address")
        for index in 0..<10 {
            let count = try store.recordRateEvent(bucket, limit: 3, windowMilliseconds: Self.minute,
                                                  nowMilliseconds: Self.start + UInt64(index) * 1000)
            #expect(count == min(index + 1, 3))
        }
        #expect(try store.rateRowCount() == 3)
        // Continued failures keep it limited: the wait runs from the newest three (7 s, 8 s, 9 s).
        #expect(try store.rateEventWait(bucket, limit: 3, windowMilliseconds: Self.minute, nowMilliseconds: Self.start + 10_000) == 57_000)
        try store.blockRateBucket(bucket, untilMilliseconds: Self.start + 600_000, nowMilliseconds: Self.start + 10_000)
        // A shorter block does not shorten it; the block drops the bucket's events.
        try store.blockRateBucket(bucket, untilMilliseconds: Self.start + 100_000, nowMilliseconds: Self.start + 10_000)
        #expect(try store.rateBlockWait(bucket, nowMilliseconds: Self.start + 10_000) == 590_000)
        #expect(try store.rateBlockWait(RateBucket(kind: "test", key: "other"), nowMilliseconds: Self.start) == nil)
        #expect(try store.rateRowCount() == 1)
        #expect(try store.rateBlockWait(bucket, nowMilliseconds: Self.start + 600_000) == nil)
    }

    @Test("expired rows are collected by later writes, a bounded batch each", arguments: StoreBackend.allCases)
    func garbageCollection(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: try scratchLocation(backend), masterKey: .random())
        for index in 0..<100 {
            try store.recordRateEvent(RateBucket(kind: "test", key: "k\(index)"), limit: 5, windowMilliseconds: Self.minute,
                                      nowMilliseconds: Self.start)
            try store.blockRateBucket(RateBucket(kind: "block", key: "k\(index)"), untilMilliseconds: Self.start + 1000,
                                      nowMilliseconds: Self.start)
        }
        #expect(try store.rateRowCount() == 200)
        let later = Self.start + Self.minute
        let fresh = RateBucket(kind: "test", key: "fresh")
        try store.recordRateEvent(fresh, limit: 5, windowMilliseconds: Self.minute, nowMilliseconds: later)
        #expect(try store.rateRowCount() == 200 - 2 * NodeShareStore.rateRowsPurgedPerWrite + 1)
        try store.recordRateEvent(fresh, limit: 5, windowMilliseconds: Self.minute, nowMilliseconds: later)
        #expect(try store.rateRowCount() == 2)
    }

    @Test("concurrent admissions from separate instances never pass the limit in total", arguments: StoreBackend.allCases)
    func atomicAdmission(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let masterKey = NodeMasterKey.random()
        let instances = try (0..<4).map { _ in try NodeShareStore(location: location, masterKey: masterKey) }
        let bucket = RateBucket(kind: "key-creations", key: "alice")
        let admitted = LockedValue(0)
        let failures = LockedValue<[String]>([])
        await onThreads(instances.count) { index in
            for _ in 0..<8 {
                do {
                    if try instances[index].admitRateEvent(bucket, limit: 10, windowMilliseconds: 3_600_000,
                                                           nowMilliseconds: Self.start) == nil {
                        admitted.withLock { $0 += 1 }
                    }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        #expect(admitted.withLock { $0 } == 10)
        #expect(try instances[0].rateEventWait(bucket, limit: 10, windowMilliseconds: 3_600_000, nowMilliseconds: Self.start) == 3_600_000)
    }
}
