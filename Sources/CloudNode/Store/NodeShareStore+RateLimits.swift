import Foundation
import MPCCrypto

/// One counter of the cluster-shared session.md §9.5 limits (`docs/protocol/session.md` §9.5): a 32-byte hash of
/// what is counted, so the database holds no principal, address or device key in the clear.
package struct RateBucket: Sendable, Hashable {
    package let bytes: [UInt8]

    /// The bucket of `key` (a principal, an address, a principal and device key) in the limit `kind`.
    package init(kind: String, key: String) {
        bytes = SHA256.hash(Array("silentshard/rate/\(kind)\u{0}\(key)".utf8))
    }
}

/// The node's cluster-shared rate-limit counters (`docs/protocol/session.md` §9.5, proposal P5): sliding
/// windows kept as one row per event (`rate_events`: bucket, time, expiry) and address blocks
/// (`rate_blocks`), so every process on the database counts the same events.
///
/// Atomicity: every write first takes the bucket's lock (PostgreSQL: a transaction-scoped advisory
/// lock on the bucket; SQLite: `BEGIN IMMEDIATE`, one writer at a time), then counts and inserts in the
/// same transaction. Two processes can therefore never both see 9 of 10 and both insert: the second
/// waits for the first's commit and counts its row.
///
/// Writes use the replay store's connection (no flush per commit: a crash may forget the last
/// fraction of a second of events, never admit more than that). Expired rows are deleted on the way,
/// a bounded batch per write. Times are wall-clock milliseconds, given by the caller.
extension NodeShareStore {
    /// Most expired rows one write deletes on the way.
    static let rateRowsPurgedPerWrite = 64

    /// Milliseconds until fewer than `limit` events of `bucket` lie within the last `window` ms, or nil
    /// when that is already so. Reads only.
    package func rateEventWait(_ bucket: RateBucket, limit: Int, windowMilliseconds window: UInt64,
                               nowMilliseconds now: UInt64) throws(NodeStoreError) -> UInt64? {
        guard limit > 0 else { return nil }
        return try replayDatabase.read { db throws(NodeStoreError) in
            try Self.wait(db, bucket, limit: limit, window: window, now: now)
        }
    }

    /// Admits one event of `bucket` if fewer than `limit` lie within the window (and records it), else
    /// returns the milliseconds until one leaves. Atomic across processes (see the type's comment).
    package func admitRateEvent(_ bucket: RateBucket, limit: Int, windowMilliseconds window: UInt64,
                                nowMilliseconds now: UInt64) throws(NodeStoreError) -> UInt64? {
        guard limit > 0 else { return nil }
        return try replayDatabase.transaction(retryable: true) { db throws(NodeStoreError) -> UInt64? in
            try db.lock(.rateBucket(bucket.bytes))
            try Self.purgeExpiredRateRows(db, now: now)
            if let wait = try Self.wait(db, bucket, limit: limit, window: window, now: now) { return wait }
            try Self.insert(db, bucket, window: window, now: now)
            return nil
        }
    }

    /// Records one event of `bucket` (a failure: it is never refused) and keeps only the newest `limit`
    /// of its rows. Returns how many lie within the window now (at most `limit`).
    @discardableResult
    package func recordRateEvent(_ bucket: RateBucket, limit: Int, windowMilliseconds window: UInt64,
                                 nowMilliseconds now: UInt64) throws(NodeStoreError) -> Int {
        guard limit > 0 else { return 0 }
        return try replayDatabase.transaction(retryable: true) { db throws(NodeStoreError) -> Int in
            try db.lock(.rateBucket(bucket.bytes))
            try Self.purgeExpiredRateRows(db, now: now)
            try Self.insert(db, bucket, window: window, now: now)
            try db.run("""
                DELETE FROM rate_events WHERE bucket = ? AND id NOT IN (
                    SELECT id FROM rate_events WHERE bucket = ? ORDER BY at DESC, id DESC LIMIT ?)
                """, [.blob(bucket.bytes), .blob(bucket.bytes), .integer(Int64(limit))])
            return try Self.recentCount(db, bucket, limit: limit, window: window, now: now)
        }
    }

    /// Blocks `bucket` until `untilMilliseconds` (a later block stays) and forgets its events.
    package func blockRateBucket(_ bucket: RateBucket, untilMilliseconds until: UInt64,
                                 nowMilliseconds now: UInt64) throws(NodeStoreError) {
        try replayDatabase.transaction(retryable: true) { db throws(NodeStoreError) in
            try db.lock(.rateBucket(bucket.bytes))
            try Self.purgeExpiredRateRows(db, now: now)
            try db.run("""
                INSERT INTO rate_blocks (bucket, blocked_until) VALUES (?, ?)
                ON CONFLICT (bucket) DO UPDATE SET blocked_until = excluded.blocked_until
                WHERE rate_blocks.blocked_until < excluded.blocked_until
                """, [.blob(bucket.bytes), .integer(Int64(clamping: until))])
            try db.run("DELETE FROM rate_events WHERE bucket = ?", [.blob(bucket.bytes)])
        }
    }

    /// Milliseconds until `bucket`'s block ends, or nil when it is not blocked. Reads only.
    package func rateBlockWait(_ bucket: RateBucket, nowMilliseconds now: UInt64) throws(NodeStoreError) -> UInt64? {
        try replayDatabase.read { db throws(NodeStoreError) in
            guard let row = try db.first("SELECT blocked_until FROM rate_blocks WHERE bucket = ? AND blocked_until > ?",
                                         [.blob(bucket.bytes), .integer(Int64(clamping: now))])
            else { return nil }
            let until = try row.integer(0)
            return until > Int64(clamping: now) ? UInt64(until) - now : nil
        }
    }

    /// Rows of both tables (tests of the garbage collection).
    func rateRowCount() throws(NodeStoreError) -> Int {
        try replayDatabase.read { db throws(NodeStoreError) in
            let events = try db.first("SELECT COUNT(*) FROM rate_events", [])?.integer(0) ?? 0
            let blocks = try db.first("SELECT COUNT(*) FROM rate_blocks", [])?.integer(0) ?? 0
            return Int(events + blocks)
        }
    }

    // MARK: Internals

    private static func insert(_ db: any StoreSQL, _ bucket: RateBucket, window: UInt64, now: UInt64) throws(NodeStoreError) {
        let (at, expiry) = (Int64(clamping: now), Int64(clamping: now.addingReportingOverflow(window).partialValue))
        try db.run("INSERT INTO rate_events (bucket, at, expires_at) VALUES (?, ?, ?)",
                   [.blob(bucket.bytes), .integer(at), .integer(max(at, expiry))])
    }

    /// How many events of `bucket` lie within the window, counting at most `limit`.
    private static func recentCount(_ db: any StoreSQL, _ bucket: RateBucket, limit: Int, window: UInt64,
                                    now: UInt64) throws(NodeStoreError) -> Int {
        let cutoff = Int64(clamping: now >= window ? now - window : 0)
        let row = try db.first("""
            SELECT COUNT(*) FROM (SELECT 1 FROM rate_events WHERE bucket = ? AND at > ? LIMIT ?) AS recent
            """, [.blob(bucket.bytes), .integer(cutoff), .integer(Int64(limit))])
        return Int(try row?.integer(0) ?? 0)
    }

    /// `EventWindow.wait` over the bucket's rows: once the limit-th newest event within the window leaves
    /// it, fewer than `limit` remain. One indexed row read, whatever the limit's size.
    private static func wait(_ db: any StoreSQL, _ bucket: RateBucket, limit: Int, window: UInt64,
                             now: UInt64) throws(NodeStoreError) -> UInt64? {
        let cutoff = Int64(clamping: now >= window ? now - window : 0)
        guard let row = try db.first("""
            SELECT at FROM rate_events WHERE bucket = ? AND at > ? ORDER BY at DESC, id DESC LIMIT 1 OFFSET ?
            """, [.blob(bucket.bytes), .integer(cutoff), .integer(Int64(limit - 1))])
        else { return nil }
        let leaves = UInt64(clamping: try row.integer(0)).addingReportingOverflow(window).partialValue
        return leaves > now ? leaves - now : 1
    }

    /// Deletes a bounded batch of expired events and ended blocks (PostgreSQL: rows no other process
    /// is deleting, `SKIP LOCKED`).
    private static func purgeExpiredRateRows(_ db: any StoreSQL, now: UInt64) throws(NodeStoreError) {
        let parameters: [StoreValue] = [.integer(Int64(clamping: now)), .integer(Int64(rateRowsPurgedPerWrite))]
        let skip = db.dialect == .postgres ? " FOR UPDATE SKIP LOCKED" : ""
        try db.run("DELETE FROM rate_events WHERE id IN (SELECT id FROM rate_events WHERE expires_at <= ? LIMIT ?\(skip))",
                   parameters)
        try db.run("""
            DELETE FROM rate_blocks WHERE bucket IN (SELECT bucket FROM rate_blocks WHERE blocked_until <= ? LIMIT ?\(skip))
            """, parameters)
    }
}
