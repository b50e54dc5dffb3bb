import Foundation
import MPCCrypto
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// What a PostgreSQL store's database is, as far as the node can tell (second security review finding 1):
/// a restore or a point-in-time recovery brings back consumed presignatures, so `NodeShareStore` records
/// this identity and fences (`restoreFence`) when it changes.
///
/// * `systemIdentifier` (`pg_control_system()`): another cluster (a restore into a new `initdb`);
/// * `timeline` (`pg_control_checkpoint()`): a point-in-time recovery or a promoted replica starts a new
///   timeline (an asynchronous replica may lack the last consumptions, so a failover fences too);
/// * `databaseOID`: a restore into another (or a re-created) database;
/// * `tableOID` (of `presignatures`): a `pg_restore --clean` or any re-created table in the same database.
///
/// A field the role may not read (the `pg_control_*` functions need `pg_monitor` or a superuser) is nil
/// and compared with nothing.
package struct PostgresStoreIdentity: Sendable, Equatable, CustomStringConvertible {
    package var systemIdentifier: String?
    package var timeline: Int64?
    package var databaseOID: Int64?
    package var tableOID: Int64?

    package init(systemIdentifier: String?, timeline: Int64?, databaseOID: Int64?, tableOID: Int64?) {
        self.systemIdentifier = systemIdentifier
        self.timeline = timeline
        self.databaseOID = databaseOID
        self.tableOID = tableOID
    }

    /// `system=…;timeline=…;database=…;presignatures=…`, `?` for an unknown field: the form kept in
    /// `meta` (`store_identity`) and in `store_fences`.
    package var description: String {
        "system=\(systemIdentifier ?? "?");timeline=\(timeline.map(String.init) ?? "?");"
            + "database=\(databaseOID.map(String.init) ?? "?");presignatures=\(tableOID.map(String.init) ?? "?")"
    }

    /// Parses `description`; nil for anything else.
    package init?(_ text: String) {
        var fields: [String: String] = [:]
        for part in text.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard pair.count == 2 else { return nil }
            fields[String(pair[0])] = pair[1] == "?" ? nil : String(pair[1])
        }
        func number(_ name: String) -> Int64?? {
            guard let value = fields[name] else { return .some(nil) }
            guard let parsed = Int64(value) else { return nil }
            return .some(parsed)
        }
        guard let timeline = number("timeline"), let database = number("database"), let table = number("presignatures")
        else { return nil }
        self.init(systemIdentifier: fields["system"], timeline: timeline, databaseOID: database, tableOID: table)
    }

    /// What changed from `recorded` to `self`, naming each field both know that differs (empty: the same
    /// database as far as can be told).
    package func changes(from recorded: PostgresStoreIdentity) -> [String] {
        var changes: [String] = []
        func compare<T: Equatable>(_ name: String, _ old: T?, _ new: T?) {
            if let old, let new, old != new { changes.append("\(name) \(old) → \(new)") }
        }
        compare("system identifier", recorded.systemIdentifier, systemIdentifier)
        compare("timeline", recorded.timeline, timeline)
        compare("database OID", recorded.databaseOID, databaseOID)
        compare("presignatures table OID", recorded.tableOID, tableOID)
        return changes
    }

    /// Reads the identity of the database inside the caller's transaction; the `pg_control_*` calls run
    /// under a savepoint each, so a role that may not call them leaves that field nil (its reason in
    /// `unreadable`) and the transaction usable.
    static func observe(_ db: any StoreSQL) throws(NodeStoreError) -> (identity: PostgresStoreIdentity, unreadable: [String]) {
        var unreadable: [String] = []
        func guarded(_ name: String, _ sql: String) throws(NodeStoreError) -> StoreValue? {
            try db.execute("SAVEPOINT silentshard_identity")
            do throws(NodeStoreError) {
                let value = try db.first(sql, [])?.values.first
                try db.execute("RELEASE SAVEPOINT silentshard_identity")
                return value
            } catch {
                try db.execute("ROLLBACK TO SAVEPOINT silentshard_identity")
                try db.execute("RELEASE SAVEPOINT silentshard_identity")
                unreadable.append("\(name): \(error)")
                return nil
            }
        }
        var system: String?
        if case .text(let text) = try guarded("pg_control_system()", "SELECT system_identifier::text FROM pg_control_system()") {
            system = text
        }
        // The timeline the server writes WAL on now (the first 8 hex digits of the current WAL file's name): it changes
        // at a promotion at once, while pg_control_checkpoint() keeps the old one until the next checkpoint.
        var timeline: Int64?
        if case .integer(let number) = try guarded("pg_walfile_name()",
                                                   "SELECT ('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::bigint") {
            timeline = number
        } else if case .integer(let number) = try guarded("pg_control_checkpoint()",
                                                          "SELECT timeline_id::bigint FROM pg_control_checkpoint()") {
            timeline = number
        }
        let row = try db.first("""
            SELECT (SELECT oid::bigint FROM pg_database WHERE datname = current_database()),
                   'presignatures'::regclass::oid::bigint
            """, [])
        let identity = PostgresStoreIdentity(systemIdentifier: system, timeline: timeline,
                                             databaseOID: try row?.integer(0), tableOID: try row?.integer(1))
        return (identity, unreadable)
    }
}

/// A SQLite store's witness file (`<database>-witness`, mode 0600; second security review finding 1): the
/// store's instance id and a counter that the database's `meta` also holds. The counter goes up at every
/// open and in every presignature-consuming transaction; the file is written after the commit, so it is
/// never ahead of the database it belongs to (several processes racing leave it at most behind: each
/// writes a value it committed, by an atomic rename). A database behind its witness (a lower counter,
/// another instance id) or without one while it holds presignature state was restored from a copy.
package struct StoreWitness: Sendable, Equatable {
    /// The store instance id (16 bytes) and the counter.
    package struct Content: Sendable, Equatable {
        package var instance: [UInt8]
        package var counter: Int64

        package init(instance: [UInt8], counter: Int64) {
            self.instance = instance
            self.counter = counter
        }
    }

    /// What the file holds.
    package enum State: Sendable, Equatable {
        case missing
        case present(Content)
        /// Present but not a witness (damaged, or written by something else).
        case unreadable
    }

    package let path: String

    /// The witness of the SQLite database at `databasePath`.
    package init(databasePath: String) { path = databasePath + "-witness" }

    private static let header = "silentshard store witness 1"

    /// Reads the file.
    package func read() -> State {
        guard let data = FileManager.default.contents(atPath: path) else {
            return FileManager.default.fileExists(atPath: path) ? .unreadable : .missing
        }
        guard data.count < 512, let text = String(data: data, encoding: .utf8) else { return .unreadable }
        let lines = text.split(separator: "\n").map(String.init)
        guard lines.count == 3, lines[0] == Self.header,
              lines[1].hasPrefix("instance "), lines[2].hasPrefix("counter "),
              let instance = try? Hex.decode(String(lines[1].dropFirst("instance ".count))), instance.count == 16,
              let counter = Int64(lines[2].dropFirst("counter ".count)), counter >= 0
        else { return .unreadable }
        return .present(Content(instance: instance, counter: counter))
    }

    /// Replaces the file with `content` (a temporary file in the same directory, mode 0600, renamed over
    /// it); false when that failed (the witness then stays behind, which is harmless).
    @discardableResult
    package func write(_ content: Content) -> Bool {
        let text = "\(Self.header)\ninstance \(Hex.encode(content.instance))\ncounter \(content.counter)\n"
        let temporary = path + ".\(getpid()).\(UInt64.random(in: 0 ... .max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        let bytes = Array(text.utf8)
        let written = posixWrite(fd, bytes)
        close(fd)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }
}

/// `write(2)` of the whole buffer (outside `StoreWitness`, whose own `write` would shadow it).
private func posixWrite(_ fd: Int32, _ bytes: [UInt8]) -> Int {
    bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
}
