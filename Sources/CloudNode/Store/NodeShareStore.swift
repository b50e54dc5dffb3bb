import Foundation
import MPCCrypto
import SilentShardCore
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// The cloud node's durable state over SQLite (DESIGN.md §6): keyshares (CURRENT and PREPARED per key
/// id, sealed with the node master key), the commit decision log, presignatures with single-use
/// consumption, finish records, device bans, per-key leases and an audit log.
///
/// * One instance owns one SQLite connection (WAL mode, `synchronous = FULL`, `secure_delete` so freed
///   pages of consumed presignatures are zeroed, 10 s busy timeout).
///   Several instances (threads, processes) may open the same file; writes serialize on SQLite's lock.
/// * Every state change is one `BEGIN IMMEDIATE` transaction that includes its audit line; nothing is
///   held across an `await` (the API is synchronous: call it off the network thread).
/// * Secrets are sealed with XChaCha20-Poly1305 under the master key, associated data naming the row's
///   place (`Sealing`), so the raw file never holds a share and a moved row fails to open.
/// * Failures are `NodeStoreError`; bad bytes on disk are typed errors, never traps.
public final class NodeShareStore: Sendable {
    let connection: LockedSQLiteConnection
    /// A second connection for the replay store (`NodeShareStore+Replay`): `synchronous = NORMAL`, so
    /// recording a session id costs no fsync on the signing path.
    let replayConnection: LockedSQLiteConnection
    let masterKey: NodeMasterKey
    let clock: @Sendable () -> Date
    /// Most unused presignatures per key id (session.md §8.2).
    public let presignatureLimit: Int
    /// How long finish records answer replays (session.md §8.3).
    public let finishRecordRetention: TimeInterval

    /// Opens or creates the store at `path` (file mode 0600). Throws `wrongMasterKey` when the
    /// database was created under another master key.
    public init(path: String, masterKey: NodeMasterKey, presignatureLimit: Int = 100,
                finishRecordRetention: TimeInterval = 7 * 24 * 3600,
                clock: @escaping @Sendable () -> Date = { Date() }) throws(NodeStoreError) {
        self.masterKey = masterKey
        self.clock = clock
        self.presignatureLimit = presignatureLimit
        self.finishRecordRetention = finishRecordRetention
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "open", errno: errno) }
        let modeChanged = fchmod(fd, 0o600) == 0
        close(fd)
        guard modeChanged else { throw .io(operation: "fchmod", errno: errno) }
        let db: SQLiteConnection
        do throws(SQLiteError) {
            db = try SQLiteConnection(path: path)
            try db.execute("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL; PRAGMA secure_delete = ON;")
        } catch {
            throw NodeStoreError(error)
        }
        connection = LockedSQLiteConnection(db)
        do throws(SQLiteError) {
            let replayDB = try SQLiteConnection(path: path)
            try replayDB.execute("PRAGMA synchronous = NORMAL;")
            replayConnection = LockedSQLiteConnection(replayDB)
        } catch {
            throw NodeStoreError(error)
        }
        try transaction { db throws(NodeStoreError) in
            try Self.createSchema(db)
            try Self.checkMasterKey(db, masterKey)
        }
    }

    private static func createSchema(_ db: SQLiteConnection) throws(NodeStoreError) {
        try sql { () throws(SQLiteError) in
            try db.execute("""
                CREATE TABLE IF NOT EXISTS meta (
                    name TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS keyshares (
                    key_id TEXT NOT NULL, slot INTEGER NOT NULL, gen BLOB NOT NULL, kind INTEGER NOT NULL,
                    digest BLOB NOT NULL, nonce BLOB NOT NULL, sealed BLOB NOT NULL, updated_at INTEGER NOT NULL,
                    PRIMARY KEY (key_id, slot)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS decisions (
                    key_id TEXT NOT NULL, gen BLOB NOT NULL, outcome INTEGER NOT NULL, decided_at INTEGER NOT NULL,
                    PRIMARY KEY (key_id, gen)) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS presignatures (
                    presig_id BLOB PRIMARY KEY NOT NULL, key_id TEXT NOT NULL, gen BLOB NOT NULL,
                    party INTEGER NOT NULL, device_key BLOB NOT NULL, expires_at INTEGER NOT NULL,
                    created_at INTEGER NOT NULL, nonce BLOB NOT NULL, sealed BLOB NOT NULL) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS presignatures_by_key ON presignatures (key_id);
                CREATE INDEX IF NOT EXISTS presignatures_by_device ON presignatures (device_key);
                CREATE TABLE IF NOT EXISTS finish_records (
                    presig_id BLOB PRIMARY KEY NOT NULL, key_id TEXT NOT NULL, request_hash BLOB NOT NULL,
                    response BLOB NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS bans (
                    device_key BLOB PRIMARY KEY NOT NULL, reason TEXT NOT NULL, instance_id BLOB NOT NULL,
                    banned_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS seen_instances (
                    instance_id BLOB PRIMARY KEY NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE INDEX IF NOT EXISTS seen_instances_by_expiry ON seen_instances (expires_at);
                CREATE TABLE IF NOT EXISTS key_owners (
                    key_id TEXT PRIMARY KEY NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS leases (
                    key_id TEXT PRIMARY KEY NOT NULL, holder BLOB NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
                CREATE TABLE IF NOT EXISTS audit_log (
                    id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, operation TEXT NOT NULL,
                    key_id TEXT, party TEXT, outcome TEXT NOT NULL);
                CREATE INDEX IF NOT EXISTS audit_log_by_key ON audit_log (key_id);
                """)
            // Added after the first release: the process holding a lease (see `acquireLease`).
            let columns = try db.prepare("SELECT 1 FROM pragma_table_info('leases') WHERE name = 'process'")
            if try !columns.step() { try db.execute("ALTER TABLE leases ADD COLUMN process TEXT") }
        }
    }

    /// Seals a fixed value on first open; later opens must be able to open it.
    private static func checkMasterKey(_ db: SQLiteConnection, _ key: NodeMasterKey) throws(NodeStoreError) {
        let stored = try sql { () throws(SQLiteError) -> [UInt8]? in
            let select = try db.prepare("SELECT value FROM meta WHERE name = 'key_check'")
            return try select.step() ? try select.blob(0) : nil
        }
        if let value = stored {
            guard value.count > 24,
                  Sealing.open(Array(value[24...]), nonce: Array(value[..<24]), key: key,
                               associatedData: Sealing.keyCheckAssociatedData) != nil
            else { throw .wrongMasterKey }
        } else {
            let sealed = Sealing.seal([], key: key, associatedData: Sealing.keyCheckAssociatedData)
            try sql { () throws(SQLiteError) in
                try db.run("INSERT INTO meta (name, value) VALUES ('key_check', ?)", [.blob(sealed.nonce + sealed.sealed)])
            }
        }
    }

    // MARK: Shared helpers

    /// Runs `body` in one `BEGIN IMMEDIATE` transaction on this instance's connection.
    func transaction<T>(_ body: (SQLiteConnection) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        try connection.withConnection { db throws(NodeStoreError) -> T in
            do throws(SQLiteTransactionError<NodeStoreError>) {
                return try db.transaction { () throws(NodeStoreError) -> T in try body(db) }
            } catch {
                throw NodeStoreError(error)
            }
        }
    }

    /// Runs a read on this instance's connection.
    func reading<T>(_ body: (SQLiteConnection) throws(SQLiteError) -> T) throws(NodeStoreError) -> T {
        try connection.withConnection { db throws(NodeStoreError) -> T in
            try sql { () throws(SQLiteError) -> T in try body(db) }
        }
    }

    /// Appends an audit line inside the caller's transaction.
    func audit(_ db: SQLiteConnection, _ operation: String, keyId: String?, party: String?,
               outcome: String) throws(NodeStoreError) {
        try sql { () throws(SQLiteError) in
            try db.run("INSERT INTO audit_log (at, operation, key_id, party, outcome) VALUES (?, ?, ?, ?, ?)",
                       [.integer(now), .text(operation), keyId.map { .text($0) } ?? .null,
                        party.map { .text($0) } ?? .null, .text(outcome)])
        }
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
