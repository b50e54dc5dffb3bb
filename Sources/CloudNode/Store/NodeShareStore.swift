import Foundation
import MPCCrypto
import SilentShardCore
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Where a `NodeShareStore` keeps its state.
package enum NodeStoreLocation: Sendable {
    /// A SQLite file (created 0600 if missing). Processes on one machine may share it.
    case sqlite(path: String)
    /// A PostgreSQL database, as a libpq URL (`postgres://user@host:5432/db`, `postgresql://…`) or
    /// keyword/value string. Any number of node processes of one role may share it (a cluster).
    case postgres(url: String)

    /// `postgres://` and `postgresql://` strings are PostgreSQL; anything else is a SQLite path.
    package init(_ string: String) {
        self = PostgresURL.isPostgres(string) ? .postgres(url: string) : .sqlite(path: string)
    }

    /// For logs: the path, or the URL with its password replaced by `***`.
    package var redactedDescription: String {
        switch self {
        case .sqlite(let path): path
        case .postgres(let url): PostgresURL.redacted(url)
        }
    }
}

/// The cloud node's durable state over SQLite or PostgreSQL (docs/design.md §6): keyshares (CURRENT and
/// PREPARED per key id, sealed with the node master key), the commit decision log, presignatures with
/// single-use consumption, finish records, device bans, per-key leases and an audit log.
///
/// * SQLite: one instance owns one connection (plus one for the replay store): WAL mode,
///   `synchronous = FULL`, `secure_delete` so freed pages of consumed presignatures are zeroed, 10 s
///   busy timeout; several instances (threads, processes) may open the same file and writes serialize
///   on SQLite's lock. PostgreSQL: up to 4 connections per instance (plus 2 for the replay
///   store), READ COMMITTED with per-key advisory locks and row locks (`PostgresStoreDatabase`
///   explains the choice); any number of processes may share the database.
/// * Every state change is one transaction that includes its audit line; nothing is held across an
///   `await` (the API is synchronous and blocking: call it off the network thread and off Swift's
///   cooperative pool).
/// * The schema is versioned (`NodeStoreMigrations`), migrated at open.
/// * Secrets are sealed with XChaCha20-Poly1305 under the master key, associated data naming the row's
///   place (`Sealing`), so the database never holds a share in the clear and a moved row fails to open.
/// * Failures are `NodeStoreError`; bad bytes in the database are typed errors, never traps.
package final class NodeShareStore: Sendable {
    let database: any StoreDatabase
    /// A second connection for the replay store (`NodeShareStore+Replay`): SQLite `synchronous =
    /// NORMAL`, PostgreSQL `synchronous_commit = off`, so recording a session id costs no flush on
    /// the signing path.
    let replayDatabase: any StoreDatabase
    let masterKey: NodeMasterKey
    let clock: @Sendable () -> Date
    /// Whether the device check leases of a PostgreSQL store expire on the database server's clock, the one clock
    /// every process of a cluster shares (`NodeShareStore+DeviceCheckLeases`): by default when no clock was
    /// injected (production); tests that inject a clock keep the store's unless they ask.
    let leaseClockIsDatabase: Bool
    /// Most unused presignatures per key id (session.md §8.2).
    package let presignatureLimit: Int
    /// How long finish records answer replays (session.md §8.3).
    package let finishRecordRetention: TimeInterval
    /// How long a retired hard-derived child's tombstone is kept (its owner is told KEY_RETIRED that long,
    /// `docs/node-server.md`); the purge task (`purgeExpired`) deletes older ones (second review finding 8).
    package let retiredKeyRetention: TimeInterval
    /// The default ``retiredKeyRetention``: 90 days.
    package static let defaultRetiredKeyRetention: TimeInterval = 90 * 24 * 3600
    /// Write transactions opened on the main connection so far, committed or not (tests of what a refusal
    /// costs, security review 2, finding 4).
    package var writeTransactionCount: Int { writeTransactions.withLock { $0 } }
    private let writeTransactions = LockedValue(0)
    /// Restore detection (`NodeShareStore+RestoreFence`, second security review finding 1).
    let restoreGuard: RestoreGuard

    /// Opens or creates the SQLite store at `path` (file mode 0600). Throws `wrongMasterKey` when the
    /// database was created under another master key.
    package convenience init(path: String, masterKey: NodeMasterKey, presignatureLimit: Int = 100,
                            finishRecordRetention: TimeInterval = 7 * 24 * 3600,
                            retiredKeyRetention: TimeInterval = NodeShareStore.defaultRetiredKeyRetention,
                            clock: (@Sendable () -> Date)? = nil) throws(NodeStoreError) {
        try self.init(location: .sqlite(path: path), masterKey: masterKey, presignatureLimit: presignatureLimit,
                      finishRecordRetention: finishRecordRetention, retiredKeyRetention: retiredKeyRetention, clock: clock)
    }

    /// Opens the store at `location`, applying missing schema migrations (creating the schema on first
    /// use). Throws `wrongMasterKey` when the database was created under another master key,
    /// `schemaTooNew` when a newer build migrated it, `postgres(sqlState: "08001", …)` when the server
    /// cannot be reached. A database found restored (`NodeShareStore+RestoreFence`) is fenced, and
    /// `restoreLog` (default: standard error) told.
    package init(location: NodeStoreLocation, masterKey: NodeMasterKey, presignatureLimit: Int = 100,
                finishRecordRetention: TimeInterval = 7 * 24 * 3600,
                retiredKeyRetention: TimeInterval = NodeShareStore.defaultRetiredKeyRetention,
                clock: (@Sendable () -> Date)? = nil, leaseClockFromDatabase: Bool? = nil,
                restoreLog: @escaping @Sendable (String) -> Void = NodeShareStore.logToStandardError) throws(NodeStoreError) {
        self.masterKey = masterKey
        restoreGuard = RestoreGuard(location: location, log: restoreLog)
        self.clock = clock ?? { Date() }
        leaseClockIsDatabase = leaseClockFromDatabase ?? (clock == nil)
        self.presignatureLimit = presignatureLimit
        self.finishRecordRetention = finishRecordRetention
        self.retiredKeyRetention = retiredKeyRetention
        switch location {
        case .sqlite(let path):
            (database, replayDatabase) = try Self.openSQLite(path)
        case .postgres(let url):
            // `synchronous_commit = on` whatever the server, role or database says: a consumed presignature must
            // not come back after a PostgreSQL crash (review of second review finding 1; the replay store below
            // accepts that loss on purpose).
            database = try PostgresStoreDatabase(url: url, settings: ["SET synchronous_commit = on"])
            replayDatabase = try PostgresStoreDatabase(url: url, settings: ["SET synchronous_commit = off"],
                                                       maximumConnections: 2)
        }
        let now = self.now
        try transaction { db throws(NodeStoreError) in
            try NodeStoreMigrations.apply(db, now: now)
            try Self.checkMasterKey(db, masterKey)
        }
        try checkRestoreAtOpen()
    }

    /// Writes a store line to standard error (the node's log).
    package static func logToStandardError(_ line: String) {
        FileHandle.standardError.write(Data("\(Date().ISO8601Format()) node store: \(line)\n".utf8))
    }

    private static func openSQLite(_ path: String) throws(NodeStoreError) -> (any StoreDatabase, any StoreDatabase) {
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "open", errno: errno) }
        let modeChanged = fchmod(fd, 0o600) == 0
        close(fd)
        guard modeChanged else { throw .io(operation: "fchmod", errno: errno) }
        do throws(SQLiteError) {
            let db = try SQLiteConnection(path: path)
            try db.enableWriteAheadLog()
            try db.execute("PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;")
            let replayDB = try SQLiteConnection(path: path)
            try replayDB.execute("PRAGMA synchronous = NORMAL;")
            return (SQLiteStoreDatabase(db), SQLiteStoreDatabase(replayDB))
        } catch {
            throw NodeStoreError(error)
        }
    }

    /// Seals a fixed value on first open; later opens must be able to open it.
    private static func checkMasterKey(_ db: any StoreSQL, _ key: NodeMasterKey) throws(NodeStoreError) {
        if let row = try db.first("SELECT value FROM meta WHERE name = 'key_check'", []) {
            let value = try row.blob(0)
            guard value.count > 24,
                  Sealing.open(Array(value[24...]), nonce: Array(value[..<24]), key: key,
                               associatedData: Sealing.keyCheckAssociatedData) != nil
            else { throw .wrongMasterKey }
        } else {
            let sealed = Sealing.seal([], key: key, associatedData: Sealing.keyCheckAssociatedData)
            try db.run("INSERT INTO meta (name, value) VALUES ('key_check', ?)", [.blob(sealed.nonce + sealed.sealed)])
        }
    }

    // MARK: Shared helpers

    /// Runs `body` in one transaction on this instance's connection (`BEGIN IMMEDIATE` on SQLite;
    /// READ COMMITTED on PostgreSQL, where writers take `StoreLockScope` locks first). With
    /// `retryable` (the default), PostgreSQL reruns the body after a deadlock: it must have no effect
    /// outside the database.
    func transaction<T>(retryable: Bool = true,
                        _ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        writeTransactions.withLock { $0 += 1 }
        return try database.transaction(retryable: retryable, body)
    }

    /// Runs reads on this instance's connection.
    func reading<T>(_ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        try database.read(body)
    }

    /// Appends an audit line inside the caller's transaction.
    func audit(_ db: any StoreSQL, _ operation: String, keyId: String?, party: String?,
               outcome: String) throws(NodeStoreError) {
        try db.run("INSERT INTO audit_log (at, operation, key_id, party, outcome) VALUES (?, ?, ?, ?, ?)",
                   [.integer(now), .text(operation), keyId.map { .text($0) } ?? .null,
                    party.map { .text($0) } ?? .null, .text(outcome)])
    }

    /// Appends an audit line in its own transaction (for refusals whose transaction rolled back).
    func auditSeparately(_ operation: String, keyId: String?, party: String?, outcome: String) {
        try? transaction { db throws(NodeStoreError) in
            try audit(db, operation, keyId: keyId, party: party, outcome: outcome)
        }
    }

    /// The clock in whole seconds since 1970.
    var now: Int64 { Int64(clock().timeIntervalSince1970.rounded(.down)) }

    /// Canonical node key id: lowercase hex only (no reserved app-side prefixes).
    static func canonicalKeyId(_ keyId: String) throws(NodeStoreError) -> String {
        guard !keyId.hasPrefix("~"), let id = try? KeyId.canonical(keyId) else { throw .invalidKeyId }
        return id
    }

    static func require32(_ bytes: [UInt8], _ name: String) throws(NodeStoreError) {
        guard bytes.count == 32 else { throw .invalidArgument("\(name) must be 32 bytes") }
    }
}
