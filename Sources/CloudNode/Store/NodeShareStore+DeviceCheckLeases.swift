import Foundation
import SessionEngine

/// Issue 33 item 4: one device's DKLs23 consistency checks one at a time across every process on this
/// database. A lease row per device (`device_check_leases`, migration 8) is taken before a signing or
/// presigning step over the device's messages and deleted after it (`DeviceCheckLease` at the session
/// layer). Taking and giving it back are one short autocommit statement each: no transaction, lock or
/// pool connection is held while the step runs, so other writes of the node never wait for a step (the
/// store-level lock of the unmerged proposal held SQLite's writer lock, or a PostgreSQL connection, for a
/// whole step). The expiry only matters when a holder crashed or stalled; it is compared on one clock for every
/// process (``leaseNow``): the database server's on PostgreSQL, whose processes may run on hosts with skewed
/// clocks (a process whose clock ran 30 s ahead would otherwise take over live leases: the audit of issue 33
/// item 4, MEDIUM-1); the machine's on SQLite, whose processes share one machine.
extension NodeShareStore {
    /// What an attempt to take a device's check lease found.
    package enum DeviceCheckLeaseAttempt: Sendable, Equatable {
        /// The caller holds the lease now. `banned`: the device's ban, read after the lease was taken, so it
        /// includes every ban a previous holder wrote before it released the lease.
        case acquired(banned: Bool)
        /// Another holder's unexpired lease: nothing was written.
        case busy
    }

    /// Takes `deviceKey`'s check lease for `holder` until `seconds` from now (the store's clock), in one
    /// statement: inserted when there is none, taken over when the lease there has expired, extended when
    /// `holder` already has it (so the statement may run twice: PostgreSQL reruns it after a lost
    /// connection); then reads the device's ban. Busy when another holder's lease has not expired.
    package func acquireDeviceCheckLease(deviceKey: [UInt8], holder: [UInt8],
                                         seconds: Int64) throws(NodeStoreError) -> DeviceCheckLeaseAttempt {
        guard !deviceKey.isEmpty, deviceKey.count <= 128 else { throw .invalidArgument("device key length") }
        guard !holder.isEmpty, holder.count <= 64, seconds > 0 else { throw .invalidArgument("lease holder and duration") }
        let now = leaseNow
        return try autocommit { db throws(NodeStoreError) -> DeviceCheckLeaseAttempt in
            let taken = try db.run("""
                INSERT INTO device_check_leases (device_key, holder, expires_at) VALUES (?, ?, \(now.sql) + ?)
                ON CONFLICT (device_key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                WHERE device_check_leases.expires_at <= \(now.sql) OR device_check_leases.holder = excluded.holder
                """, [.blob(deviceKey), .blob(holder), .integer(now.value), .integer(seconds), .integer(now.value)])
            guard taken > 0 else { return .busy }
            return .acquired(banned: try isBanned(db, deviceKey))
        }
    }

    /// Deletes `holder`'s check lease on `deviceKey`, in one statement; another holder's lease (one that took
    /// over an expired lease of `holder`) is left alone. Returns whether `holder`'s row was there.
    @discardableResult
    package func releaseDeviceCheckLease(deviceKey: [UInt8], holder: [UInt8]) throws(NodeStoreError) -> Bool {
        try autocommit { db throws(NodeStoreError) -> Bool in
            try db.run("DELETE FROM device_check_leases WHERE device_key = ? AND holder = ?",
                       [.blob(deviceKey), .blob(holder)]) > 0
        }
    }

    /// "Now" for lease expiries, as SQL with one integer parameter (`value`): on a PostgreSQL store whose leases
    /// run on the database's clock (``leaseClockIsDatabase``: every store without an injected clock), the server's clock (`clock_timestamp()`, whole seconds; `value` 0); otherwise the store's clock (the
    /// parameter itself): SQLite's processes share one machine's clock, and tests inject theirs.
    var leaseNow: (sql: String, value: Int64) {
        database.dialect == .postgres && leaseClockIsDatabase
            ? ("(CAST(EXTRACT(EPOCH FROM clock_timestamp()) AS BIGINT) + ?)", 0)
            : ("?", now)
    }

    /// Runs `body`'s statements outside a transaction, each committed on its own. `body` must be safe to run
    /// twice: PostgreSQL runs it again after a lost connection.
    ///
    /// SQLite: on the replay connection (`synchronous = NORMAL`: a WAL commit without an fsync, under the 10 s
    /// busy timeout; and not queued behind this instance's main connection). A lease only matters while its
    /// holder runs, and what could drop the last commits of a WAL at NORMAL — an OS crash or power loss — ends
    /// every process on the machine, so every holder; the ban is written on the main connection (`FULL`)
    /// before the lease is released. PostgreSQL: one connection of the main pool for the length of `body`
    /// (`synchronous_commit = on`: a server crash does not end the holders, so their leases must survive it).
    private func autocommit<T>(_ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        try (database.dialect == .sqlite ? replayDatabase : database).read(body)
    }
}
