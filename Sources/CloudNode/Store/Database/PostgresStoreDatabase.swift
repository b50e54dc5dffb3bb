import Foundation

/// The node store on PostgreSQL: a small pool of libpq connections per instance (opened on demand,
/// up to `maximumConnections`; a caller waits when all are busy), so one node process runs several
/// store transactions at once, and a lost connection is re-established on its next use.
///
/// Isolation: READ COMMITTED plus explicit locks, chosen over SERIALIZABLE-and-retry because
/// `consumePresignature` runs the caller's `finish` (the MPC computation) inside its transaction and
/// must not run it twice:
/// * every write of one key id first takes `pg_advisory_xact_lock` on that key id
///   (`StoreLockScope.key`), bans and presignature stores also on the device — so the
///   read-check-write sequences (CAS commits, leases, quotas, stale-generation checks) of one key run
///   one at a time across every connection of every process, while different keys proceed in
///   parallel (no global lock); the lock order is always key, then device;
/// * a presignature is consumed by `DELETE … RETURNING` first: the row lock makes concurrent finals
///   wait, and once the winner commits the others' `DELETE` matches nothing and they read its finish
///   record (READ COMMITTED takes a new snapshot per statement); if the winner rolls back, the next one
///   gets the row;
/// * replay ids are a unique-key `INSERT … ON CONFLICT DO NOTHING`: one of concurrent inserts wins;
/// * schema migrations run under one advisory lock (`StoreLockScope.migrations`).
/// Transactions marked retryable are run again (up to 5 times) after a deadlock or serialization
/// failure, which the lock order makes rare (e.g. a commit and a ban deleting the same presignature
/// rows in different orders); a retried body has no effect outside the database.
final class PostgresStoreDatabase: StoreDatabase, @unchecked Sendable {
    private let url: String
    private let settings: [String]
    private let maximumConnections: Int
    private let condition = NSCondition()
    private var idle: [PostgresConnection] = []
    private var opened = 0
    private var reconnectCount = 0
    var dialect: StoreDialect { .postgres }
    private static let attempts = 5

    /// Connects to `url` (once now, so a bad URL fails at open); `settings` (e.g. `SET
    /// synchronous_commit = off`) run on every connection after each (re)connect.
    init(url: String, settings: [String] = [], maximumConnections: Int = 4) throws(NodeStoreError) {
        self.url = url
        self.settings = ["SET client_min_messages = warning"] + settings
        self.maximumConnections = max(1, maximumConnections)
        idle = [try Self.connect(url, self.settings)]
        opened = 1
    }

    private static func connect(_ url: String, _ settings: [String]) throws(NodeStoreError) -> PostgresConnection {
        try postgres { () throws(PostgresError) -> PostgresConnection in
            let connection = try PostgresConnection(conninfo: url)
            for setting in settings { try connection.execute(setting) }
            return connection
        }
    }

    /// An idle connection, a new one while under the maximum, or the next one released.
    private func acquire() throws(NodeStoreError) -> PostgresConnection {
        condition.lock()
        while idle.isEmpty && opened >= maximumConnections { condition.wait() }
        if let connection = idle.popLast() {
            condition.unlock()
            guard !connection.isConnected else { return connection }
            do throws(NodeStoreError) {
                try reconnect(connection)
            } catch {
                release(connection)
                throw error
            }
            return connection
        }
        opened += 1
        condition.unlock()
        do throws(NodeStoreError) {
            let connection = try Self.connect(url, settings)
            // A new connection may reach a server restored since the last one: counted like a reconnect, so the
            // store checks the database's identity again (review of second review finding 1).
            condition.lock()
            reconnectCount += 1
            condition.unlock()
            return connection
        } catch {
            condition.lock()
            opened -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func reconnect(_ connection: PostgresConnection) throws(NodeStoreError) {
        try postgres { () throws(PostgresError) in
            try connection.reset()
            for setting in settings { try connection.execute(setting) }
        }
        condition.lock()
        reconnectCount += 1
        condition.unlock()
    }

    /// How many lost connections were re-established: the store checks its database's identity again
    /// after each (`NodeShareStore+RestoreFence`; the server may have been restored meanwhile).
    var reconnections: Int {
        condition.lock()
        defer { condition.unlock() }
        return reconnectCount
    }

    private func release(_ connection: PostgresConnection) {
        condition.lock()
        idle.append(connection)
        condition.signal()
        condition.unlock()
    }

    func transaction<T>(retryable: Bool, _ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        let connection = try acquire()
        defer { release(connection) }
        let session = PostgresStoreSQL(connection)
        var attempt = 1
        while true {
            do throws(NodeStoreError) {
                do throws(NodeStoreError) {
                    try postgres { () throws(PostgresError) in try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED") }
                } catch where !connection.isConnected {
                    // The server closed this idle connection (restart, failover, idle timeout): nothing
                    // ran yet, so reconnect once and begin again.
                    try reconnect(connection)
                    try postgres { () throws(PostgresError) in try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED") }
                }
                let result = try body(session)
                try postgres { () throws(PostgresError) in try connection.execute("COMMIT") }
                return result
            } catch {
                try? connection.execute("ROLLBACK")
                if retryable, attempt < Self.attempts, case .postgres(let state, _) = error,
                   state == PostgresError.serializationFailure || state == PostgresError.deadlockDetected {
                    attempt += 1
                    continue
                }
                throw error
            }
        }
    }

    func read<T>(_ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        let connection = try acquire()
        defer { release(connection) }
        do throws(NodeStoreError) {
            return try body(PostgresStoreSQL(connection))
        } catch where !connection.isConnected {
            try reconnect(connection)  // reads are safe to run again
            return try body(PostgresStoreSQL(connection))
        }
    }
}

private final class PostgresStoreSQL: StoreSQL {
    let connection: PostgresConnection
    var dialect: StoreDialect { .postgres }

    init(_ connection: PostgresConnection) { self.connection = connection }

    func run(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> Int {
        try postgres { () throws(PostgresError) -> Int in try connection.query(Self.numbered(sql), parameters).affected }
    }

    func query(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> [StoreRow] {
        try postgres { () throws(PostgresError) -> [StoreRow] in
            try connection.query(Self.numbered(sql), parameters).rows.map(StoreRow.init(values:))
        }
    }

    func execute(_ script: String) throws(NodeStoreError) {
        try postgres { () throws(PostgresError) in try connection.execute(script) }
    }

    func lock(_ scope: StoreLockScope) throws(NodeStoreError) {
        try postgres { () throws(PostgresError) in
            try connection.query("SELECT pg_advisory_xact_lock($1)", [.integer(scope.advisoryKey)])
        }
    }

    /// `?` placeholders → `$1…$n` (the store's SQL has no `?` inside string literals).
    static func numbered(_ sql: String) -> String {
        var out = ""
        out.reserveCapacity(sql.count + 8)
        var index = 0
        for character in sql {
            if character == "?" {
                index += 1
                out += "$\(index)"
            } else {
                out.append(character)
            }
        }
        return out
    }
}

/// Runs libpq calls, mapping their failures to `NodeStoreError`.
@inline(__always) @discardableResult
func postgres<T>(_ body: () throws(PostgresError) -> T) throws(NodeStoreError) -> T {
    do { return try body() } catch { throw NodeStoreError(error) }
}
