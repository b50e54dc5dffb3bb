internal import CSQLite
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// One SQLite connection. Not thread-safe by itself: owners serialize access (the stores keep it inside
/// a `LockedValue` or a `LockedSQLiteConnection`) and never hold a transaction across an `await`.
package final class SQLiteConnection {
    private let handle: OpaquePointer
    /// Compiled statements by SQL text, reused by `cachedStatement` (the store runs the same few
    /// statements on every request); `inUse` holds the ones a live wrapper has out.
    private var statementCache: [String: OpaquePointer] = [:]
    private var inUse: Set<OpaquePointer> = []
    private static let statementCacheLimit = 64
    private let busyTimeoutMilliseconds: Int32

    /// Opens (creating if needed) the database at `path`, with a busy timeout so that concurrent
    /// connections wait for each other's transactions instead of failing at once.
    package init(path: String, busyTimeoutMilliseconds: Int32 = 10_000) throws(SQLiteError) {
        var db: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open database"
            if let db { sqlite3_close_v2(db) }
            throw SQLiteError(code: rc, message: message)
        }
        handle = db
        self.busyTimeoutMilliseconds = busyTimeoutMilliseconds
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        for statement in statementCache.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(handle)
    }

    /// The last error on this connection.
    package func lastError(_ rc: Int32) -> SQLiteError {
        SQLiteError(code: rc, message: String(cString: sqlite3_errmsg(handle)))
    }

    /// Runs one or more statements without parameters.
    package func execute(_ sql: String) throws(SQLiteError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw lastError(rc) }
    }

    /// Puts the database in WAL mode (`PRAGMA journal_mode = WAL`), waiting up to the busy timeout for
    /// other connections. The pragma needs its own wait: a connection converting a fresh file reads the
    /// header and then upgrades to a write lock, and SQLite does not call the busy handler for that upgrade,
    /// so when several connections switch one new file at once, the losers fail at once with `SQLITE_BUSY`
    /// (measured: at least one of eight racing connections failed in about one race in six; CI saw a node
    /// store fail to open). Throws unless the mode ends up WAL.
    package func enableWriteAheadLog() throws(SQLiteError) {
        let clock = ContinuousClock()
        let deadline = clock.now.advanced(by: .milliseconds(Int(busyTimeoutMilliseconds)))
        var pauseMicroseconds: UInt32 = 500
        while true {
            do throws(SQLiteError) {
                let statement = try prepare("PRAGMA journal_mode = WAL")
                guard try statement.step() else { throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode returned no row") }
                let mode = try statement.text(0)
                guard mode.lowercased() == "wal" else {
                    throw SQLiteError(code: SQLITE_ERROR, message: "journal_mode is \(mode), not wal")
                }
                return
            } catch where error.isBusy && clock.now < deadline {
                usleep(pauseMicroseconds)
                pauseMicroseconds = min(pauseMicroseconds * 2, 20_000)
            }
        }
    }

    /// Compiles one statement.
    package func prepare(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw lastError(rc) }
        return SQLiteStatement(statement, connection: self)
    }

    /// A compiled statement for `sql` from this connection's cache (compiled on first use; a fresh one
    /// if the cached one is still out). It is reset and its bindings cleared when the wrapper goes away.
    package func cachedStatement(_ sql: String) throws(SQLiteError) -> SQLiteStatement {
        if let cached = statementCache[sql], !inUse.contains(cached) {
            inUse.insert(cached)
            return SQLiteStatement(cached, connection: self, owned: false)
        }
        guard statementCache[sql] == nil else { return try prepare(sql) }
        var statement: OpaquePointer?
        let rc = sqlite3_prepare_v2(handle, sql, -1, &statement, nil)
        guard rc == SQLITE_OK, let statement else { throw lastError(rc) }
        if statementCache.count >= Self.statementCacheLimit {
            // Dynamic SQL would grow the cache without bound: drop the idle entries and start over.
            for (text, cached) in statementCache where !inUse.contains(cached) {
                sqlite3_finalize(cached)
                statementCache[text] = nil
            }
        }
        statementCache[sql] = statement
        inUse.insert(statement)
        return SQLiteStatement(statement, connection: self, owned: false)
    }

    /// Called by a cached statement's wrapper when it is done.
    func returnCached(_ statement: OpaquePointer) {
        inUse.remove(statement)
    }

    /// Compiles, binds and runs a statement that returns no rows; returns the number of rows changed.
    @discardableResult
    package func run(_ sql: String, _ values: [SQLiteValue] = []) throws(SQLiteError) -> Int {
        let statement = try cachedStatement(sql)
        try statement.bind(values)
        while try statement.step() {}
        return Int(sqlite3_changes(handle))
    }

    /// Runs `body` inside one transaction: commits when it returns, rolls back when it throws.
    /// `immediate` takes the write lock up front (`BEGIN IMMEDIATE`), so read-then-write sequences
    /// cannot interleave with another connection's writes.
    package func transaction<T, E: Error>(
        immediate: Bool = true, _ body: () throws(E) -> T
    ) throws(SQLiteTransactionError<E>) -> T {
        do { try run(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED") } catch { throw .database(error) }
        let result: T
        do {
            result = try body()
        } catch {
            _ = try? run("ROLLBACK")
            throw .body(error)
        }
        do {
            try run("COMMIT")
        } catch {
            _ = try? run("ROLLBACK")
            throw .database(error)
        }
        return result
    }
}

/// Why a transaction failed: SQLite itself, or the body (rolled back).
package enum SQLiteTransactionError<E: Error>: Error {
    case database(SQLiteError)
    case body(E)
}

/// A value bound to a statement parameter.
package enum SQLiteValue {
    case integer(Int64)
    case blob([UInt8])
    case text(String)
    case null
}
