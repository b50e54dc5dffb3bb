import Foundation

/// The node store on PostgreSQL: one libpq connection per instance, used under a lock (so one
/// `NodeShareStore` is one connection, like one process of a cluster).
///
/// Isolation: READ COMMITTED plus explicit locks, chosen over SERIALIZABLE-and-retry because
/// `consumePresignature` runs the caller's `finish` (the MPC computation) inside its transaction and
/// must not run it twice:
/// * every write of one key id first takes `pg_advisory_xact_lock` on that key id
///   (`StoreLockScope.key`), bans and presignature stores also on the device — so the
///   read-check-write sequences (CAS commits, leases, quotas, stale-generation checks) of one key run
///   one at a time across every process, while different keys proceed in parallel (no global lock);
///   the lock order is always key, then device;
/// * a presignature is consumed by `DELETE … RETURNING` first: the row lock makes concurrent finals
///   wait, and once the winner commits the others' `DELETE` matches nothing and they read its finish
///   record (READ COMMITTED takes a new snapshot per statement); if the winner rolls back, the next one
///   gets the row;
/// * replay ids are a unique-key `INSERT … ON CONFLICT DO NOTHING`: one of concurrent inserts wins.
/// Transactions marked retryable are run again (up to 5 times) after a deadlock or serialization
/// failure, which the lock order makes rare (e.g. a commit and a ban deleting the same presignature
/// rows in different orders).
final class PostgresStoreDatabase: StoreDatabase, @unchecked Sendable {
    private let lock = NSLock()
    private let connection: PostgresConnection
    var dialect: StoreDialect { .postgres }
    private static let attempts = 5

    /// Connects to `url`; `settings` (e.g. `SET synchronous_commit = off`) run after every (re)connect.
    init(url: String, settings: [String] = []) throws(NodeStoreError) {
        do throws(PostgresError) {
            connection = try PostgresConnection(conninfo: url)
            for setting in ["SET client_min_messages = warning"] + settings { try connection.execute(setting) }
        } catch {
            throw NodeStoreError(error)
        }
        self.settings = settings
    }

    private let settings: [String]

    func transaction<T>(retryable: Bool, _ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        lock.lock()
        defer { lock.unlock() }
        try reconnectIfNeeded()
        let session = PostgresStoreSQL(connection)
        var attempt = 1
        while true {
            do throws(NodeStoreError) {
                try postgres { () throws(PostgresError) in try connection.execute("BEGIN ISOLATION LEVEL READ COMMITTED") }
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
        lock.lock()
        defer { lock.unlock() }
        try reconnectIfNeeded()
        return try body(PostgresStoreSQL(connection))
    }

    private func reconnectIfNeeded() throws(NodeStoreError) {
        guard !connection.isConnected else { return }
        try postgres { () throws(PostgresError) in
            try connection.reset()
            for setting in ["SET client_min_messages = warning"] + settings { try connection.execute(setting) }
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
