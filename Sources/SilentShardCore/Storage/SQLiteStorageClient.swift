import MPCCrypto
import Foundation
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// Records in one SQLite table, `keyshare_records(key_id TEXT PRIMARY KEY, record BLOB)`, each record
/// encoded with `KeyshareRecordCodec` (versioned, SHA-256 checked, bound to its key id). Every write
/// and delete is one transaction; the database runs in WAL mode with `synchronous = FULL` and
/// `fullfsync` / `checkpoint_fullfsync` on, so a committed write survives power loss — on Apple file systems
/// a plain `fsync` leaves the data in the drive's cache, `F_FULLFSYNC` does not (security review 2, finding 14;
/// elsewhere SQLite ignores the two). The database file is created with mode 0600.
///
/// Like the file store it checks integrity but does not encrypt: use
/// `SQLiteStorageClient.encrypted(path:keyProvider:)` unless the file is already in protected storage.
public final class SQLiteStorageClient: StorageClient {
    private let connection: LockedValue<SQLiteConnection>

    /// Opens or creates the database at `path`.
    public init(path: String) throws(StorageError) {
        // Create the file ourselves so it is 0600 from its first byte (SQLite would use 0644 & ~umask);
        // the -wal and -shm files SQLite creates copy this mode.
        let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .io(operation: "open", errno: errno) }
        let modeChanged = fchmod(fd, 0o600) == 0
        close(fd)
        guard modeChanged else { throw .io(operation: "fchmod", errno: errno) }
        do throws(SQLiteError) {
            let db = try SQLiteConnection(path: path)
            try db.enableWriteAheadLog()
            try db.execute("""
                \(Self.durabilityPragmas)
                CREATE TABLE IF NOT EXISTS keyshare_records (
                    key_id TEXT PRIMARY KEY NOT NULL,
                    record BLOB NOT NULL
                ) WITHOUT ROWID;
                """)
            connection = LockedValue(db)
        } catch {
            throw StorageError(error)
        }
    }

    /// What every connection sets before use: full synchronous commits, and on Apple platforms `F_FULLFSYNC` for
    /// commits and checkpoints (`fsync` alone does not flush the drive's cache there).
    static let durabilityPragmas = "PRAGMA synchronous = FULL; PRAGMA fullfsync = ON; PRAGMA checkpoint_fullfsync = ON;"

    /// The connection's `synchronous`, `fullfsync` and `checkpoint_fullfsync` settings, as SQLite reports them.
    package func durabilitySettings() throws(StorageError) -> [String: Int64] {
        try connection.withLock { db throws(StorageError) -> [String: Int64] in
            var settings: [String: Int64] = [:]
            do throws(SQLiteError) {
                for name in ["synchronous", "fullfsync", "checkpoint_fullfsync"] {
                    let statement = try db.prepare("PRAGMA \(name)")
                    guard try statement.step() else { continue }
                    settings[name] = try statement.integer(0)
                }
            } catch {
                throw StorageError(error)
            }
            return settings
        }
    }

    public func read(keyId: String) async throws -> KeyshareRecord? {
        let id = try KeyId.canonical(keyId)
        let bytes = try connection.withLock { db throws(StorageError) -> [UInt8]? in
            do throws(SQLiteError) {
                let statement = try db.prepare("SELECT record FROM keyshare_records WHERE key_id = ?")
                try statement.bind([.text(id)])
                guard try statement.step() else { return nil }
                return try statement.blob(0)
            } catch {
                throw StorageError(error, keyId: id)
            }
        }
        guard let bytes else { return nil }
        return try KeyshareRecordCodec.decode(bytes, expectedKeyId: id)
    }

    public func write(_ record: KeyshareRecord) async throws {
        var record = record
        record.keyId = try KeyId.canonical(record.keyId)
        let bytes = try KeyshareRecordCodec.encode(record)
        let id = record.keyId
        try connection.withLock { db throws(StorageError) in
            try Self.inTransaction(db, keyId: id) { () throws(SQLiteError) in
                try db.run("INSERT OR REPLACE INTO keyshare_records (key_id, record) VALUES (?, ?)",
                           [.text(id), .blob(bytes)])
            }
        }
    }

    public func delete(keyId: String) async throws {
        let id = try KeyId.canonical(keyId)
        try connection.withLock { db throws(StorageError) in
            try Self.inTransaction(db, keyId: id) { () throws(SQLiteError) in
                try db.run("DELETE FROM keyshare_records WHERE key_id = ?", [.text(id)])
            }
        }
    }

    private static func inTransaction(
        _ db: SQLiteConnection, keyId: String, _ body: () throws(SQLiteError) -> Void
    ) throws(StorageError) {
        do {
            try db.transaction(body)
        } catch {
            switch error {
            case .database(let error), .body(let error): throw StorageError(error, keyId: keyId)
            }
        }
    }
}
