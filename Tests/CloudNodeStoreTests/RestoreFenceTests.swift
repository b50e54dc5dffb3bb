import Foundation
import MPCCrypto
import Synchronization
import Testing
@testable import CloudNode
import SilentShardCore

/// Second security review finding 1 at the store: the presignature epoch and restore fence, the SQLite
/// witness, the PostgreSQL identity (`NodeShareStore+RestoreFence`, `StoreIdentity`).
@Suite("NodeShareStore: restore fence, witness and store identity (review 2, finding 1)")
struct RestoreFenceTests {
    func presignature(_ id: UInt8) -> NodePresignature {
        NodePresignature(id: bytes32(id), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                         expiresAt: Date().addingTimeInterval(3600), secret: secretShare(id, count: 96))
    }

    /// Log lines a store writes about restores.
    final class Lines: Sendable {
        let lines = Mutex<[String]>([])
        var all: [String] { lines.withLock { $0 } }
        var log: @Sendable (String) -> Void { { line in self.lines.withLock { $0.append(line) } } }
    }

    func consume(_ store: NodeShareStore, _ id: UInt8, request: UInt8 = 0xA0) throws -> PresignatureFinish {
        try store.consumePresignature(id: bytes32(id), requestHash: bytes32(request)) { _, _ in [id] }
    }

    @Test("finding 1: a fence invalidates every presignature stored before it, is recorded, and a new one works",
          arguments: StoreBackend.allCases)
    func finding1_fenceInvalidatesOlderPresignatures(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.storePresignature(presignature(1))
        try store.storePresignature(presignature(2))
        #expect(try consume(store, 2) == .finished(response: [2]))
        let epoch = try store.presignatureEpoch()
        let fence = try store.restoreFence(reason: "test restore")
        #expect(fence.presignaturesDeleted == 1 && fence.oldEpoch == epoch && fence.newEpoch != epoch)
        #expect(try store.presignatureEpoch() == fence.newEpoch)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
        #expect(try store.storeFences() == [fence])
        #expect(nodeError { try consume(store, 1) } == .presignatureNotFound)
        // Finish records are kept: the identical request gets its identical answer, another is refused.
        #expect(try consume(store, 2) == .replayed(response: [2]))
        #expect(nodeError { try consume(store, 2, request: 0xB0) } == .presignatureConsumed)
        #expect(try store.auditLog().contains { $0.operation == "restore fence" && $0.outcome.contains("1 presignature(s)") })
        try store.storePresignature(presignature(3))
        #expect(try consume(store, 3) == .finished(response: [3]))
    }

    @Test("migration 6: a database at version 5 gains the epoch; its existing presignatures stay usable",
          arguments: StoreBackend.allCases)
    func migrationSixKeepsExistingPresignatures(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend), masterKey = NodeMasterKey.random(), lines = Lines()
        try storeWithCommittedKey(location, masterKey: masterKey).storePresignature(presignature(1))
        let undo = """
            ALTER TABLE presignatures DROP COLUMN epoch; DROP TABLE store_fences;
            DELETE FROM meta WHERE name = 'presign_epoch'; DELETE FROM schema_migrations WHERE version = 6
            """
        try rawExecute(location, sqlite: undo, postgres: undo)
        let reopened = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        #expect(try reopened.presignatureEpoch().count == 16)
        #expect(try consume(reopened, 1) == .finished(response: [1]))
        #expect(lines.all.isEmpty)
        #expect(try reopened.storeFences().isEmpty)
    }

    @Test("finding 1: a row of an older epoch (stored while a fence ran) is refused and stays unusable",
          arguments: StoreBackend.allCases)
    func finding1_olderEpochRowIsRefused(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        try store.storePresignature(presignature(4))
        try rawExecute(location, sqlite: "UPDATE presignatures SET epoch = x'00'",
                       postgres: "UPDATE presignatures SET epoch = '\\x00'::bytea")
        #expect(nodeError { try consume(store, 4) } == .presignatureNotFound)
        #expect(try store.presignatureCount(keyId: keyA) == 1)  // refused, not consumed
    }

    // MARK: SQLite witness

    /// Copies the database file and its WAL (no shared-memory file), as a file backup does.
    func copyDatabase(_ source: String, _ target: String) throws {
        for suffix in ["", "-wal", "-shm"] where FileManager.default.fileExists(atPath: target + suffix) {
            try FileManager.default.removeItem(atPath: target + suffix)
        }
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: source + suffix) {
            try FileManager.default.copyItem(atPath: source + suffix, toPath: target + suffix)
        }
    }

    func counter(_ store: NodeShareStore) throws -> Int64 {
        try store.reading { db throws(NodeStoreError) -> Int64 in
            try db.first("SELECT value FROM meta WHERE name = 'witness_counter'", [])?.integer(0) ?? -1
        }
    }

    @Test("finding 1: a SQLite copy behind its witness is fenced at open and the witness follows the database")
    func finding1_sqliteCopyBehindWitnessIsFenced() throws {
        let path = scratchPath(), backup = scratchPath("backup.sqlite"), masterKey = NodeMasterKey.random()
        let lines = Lines()
        do {
            let store = try storeWithCommittedKey(path: path, masterKey: masterKey)
            try store.storePresignature(presignature(1))
            try store.storePresignature(presignature(2))
        }
        try copyDatabase(path, backup)
        do {
            let store = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
            #expect(try consume(store, 1) == .finished(response: [1]))
            guard case .present(let witness) = StoreWitness(databasePath: path).read() else {
                Issue.record("no witness")
                return
            }
            #expect(try witness.counter == counter(store))  // written after the commit
            // mode 0600
            let mode = try FileManager.default.attributesOfItem(atPath: path + "-witness")[.posixPermissions] as? Int
            #expect(mode == 0o600)
        }
        #expect(lines.all.isEmpty)
        try copyDatabase(backup, path)  // the restore
        let restored = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(nodeError { try consume(restored, 1, request: 0xB1) } == .presignatureNotFound)
        #expect(nodeError { try consume(restored, 2) } == .presignatureNotFound)
        let fences = try restored.storeFences()
        #expect(fences.count == 1 && fences.first?.presignaturesDeleted == 2)
        #expect(fences.first?.reason.contains("behind its witness") == true)
        #expect(lines.all.count == 1 && lines.all.first?.contains("SECURITY") == true)
        // The witness now matches the fenced database: the next open is quiet.
        _ = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.count == 1)
    }

    @Test("finding 1: a SQLite database that goes back under a running store is refused, then fenced")
    func finding1_sqliteDatabaseGoesBackUnderRunningStore() throws {
        let location = try scratchLocation(.sqlite), lines = Lines(), masterKey = NodeMasterKey.random()
        _ = try storeWithCommittedKey(location, masterKey: masterKey)
        let store = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        for id in [UInt8(1), 2, 3] { try store.storePresignature(presignature(id)) }
        #expect(try consume(store, 1) == .finished(response: [1]))
        // What a restore in place does to the counter (the rows it brings back are here already).
        try rawExecute(location, sqlite: "UPDATE meta SET value = 1 WHERE name = 'witness_counter'", postgres: "")
        #expect(nodeError { try consume(store, 2) } == .presignatureNotFound)
        #expect(lines.all.count == 1)
        #expect(nodeError { try consume(store, 3) } == .presignatureNotFound)  // fenced first
        #expect(try store.storeFences().first?.reason.contains("went back") == true)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
        try store.storePresignature(presignature(4))
        #expect(try consume(store, 4) == .finished(response: [4]))
    }

    @Test("finding 1: a witness behind the database (a lost or raced write) is harmless; one ahead fences")
    func finding1_witnessBehindIsHarmlessAheadFences() throws {
        let path = scratchPath(), masterKey = NodeMasterKey.random(), lines = Lines()
        let witness = StoreWitness(databasePath: path)
        do {
            let store = try storeWithCommittedKey(path: path, masterKey: masterKey)
            try store.storePresignature(presignature(1))
            try store.storePresignature(presignature(2))
        }
        guard case .present(let written) = witness.read() else {
            Issue.record("no witness")
            return
        }
        #expect(witness.write(StoreWitness.Content(instance: written.instance, counter: written.counter - 1)))
        _ = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.isEmpty)
        guard case .present(let now) = witness.read() else { return }
        #expect(witness.write(StoreWitness.Content(instance: now.instance, counter: now.counter + 1)))
        let store = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.count == 1)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
    }

    @Test("finding 1: a missing witness fences a database holding presignature state, not an empty one")
    func finding1_missingWitness() throws {
        let masterKey = NodeMasterKey.random(), lines = Lines()
        let empty = scratchPath()
        _ = try storeWithCommittedKey(path: empty, masterKey: masterKey)
        try FileManager.default.removeItem(atPath: empty + "-witness")
        _ = try NodeShareStore(location: .sqlite(path: empty), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.isEmpty)
        #expect(FileManager.default.fileExists(atPath: empty + "-witness"))

        // A new database where an old one was: the old witness names another instance, nothing to fence.
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: empty + suffix) }
        _ = try storeWithCommittedKey(path: empty, masterKey: masterKey)
        #expect(lines.all.isEmpty)

        let used = scratchPath()
        try storeWithCommittedKey(path: used, masterKey: masterKey).storePresignature(presignature(1))
        try FileManager.default.removeItem(atPath: used + "-witness")
        let store = try NodeShareStore(location: .sqlite(path: used), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.count == 1 && lines.all.first?.contains("missing") == true)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
    }

    @Test("finding 1: another instance's witness, or an unreadable one, fences")
    func finding1_otherInstanceOrUnreadableWitness() throws {
        let masterKey = NodeMasterKey.random(), lines = Lines()
        let path = scratchPath()
        try storeWithCommittedKey(path: path, masterKey: masterKey).storePresignature(presignature(1))
        // Another store's database copied over this one: its instance differs from the witness's.
        StoreWitness(databasePath: path).write(StoreWitness.Content(instance: [UInt8](repeating: 7, count: 16), counter: 1))
        var store = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(try store.storeFences().last?.reason.contains("witness names") == true)
        try store.storePresignature(presignature(2))
        try Data("garbage".utf8).write(to: URL(fileURLWithPath: path + "-witness"))
        store = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(try store.storeFences().last?.reason.contains("unreadable") == true)
        #expect(try store.presignatureCount(keyId: keyA) == 0 && lines.all.count == 2)
    }

    @Test("finding 1: stores racing on one SQLite file leave the witness at most behind, never ahead", .timeLimit(.minutes(2)))
    func finding1_witnessRaces() throws {
        let path = scratchPath(), masterKey = NodeMasterKey.random(), lines = Lines()
        let setup = try storeWithCommittedKey(path: path, masterKey: masterKey)
        let perStore = 12, stores = 4
        for id in 0..<(perStore * stores) { try setup.storePresignature(presignature(UInt8(id + 1))) }
        // Each instance is what a separate process would hold: its own connections to the file.
        let instances = try (0..<stores).map { _ in
            try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        }
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: stores) { index in
            for n in 0..<perStore {
                let id = UInt8(index * perStore + n + 1)
                if (try? consume(instances[index], id)) != .finished(response: [id]) { failures.withLock { $0 += 1 } }
                if n % 4 == 0, let opened = try? NodeShareStore(location: .sqlite(path: path), masterKey: masterKey,
                                                                restoreLog: lines.log) {
                    _ = opened  // opens bump the counter too
                }
            }
        }
        #expect(failures.withLock { $0 } == 0)
        guard case .present(let witness) = StoreWitness(databasePath: path).read() else {
            Issue.record("no witness")
            return
        }
        #expect(try witness.counter <= counter(setup))
        #expect(lines.all.isEmpty)
        _ = try NodeShareStore(location: .sqlite(path: path), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.isEmpty)
        #expect(try setup.storeFences().isEmpty)
    }

    // MARK: PostgreSQL identity

    @Test("finding 1: identity text round-trips; changes name each known field that differs")
    func finding1_identityChanges() {
        let recorded = PostgresStoreIdentity(systemIdentifier: "7300", timeline: 1, databaseOID: 5, tableOID: 16400)
        #expect(PostgresStoreIdentity(recorded.description) == recorded)
        let partial = PostgresStoreIdentity(systemIdentifier: nil, timeline: nil, databaseOID: 5, tableOID: 16400)
        #expect(PostgresStoreIdentity(partial.description) == partial)
        #expect(partial.changes(from: recorded).isEmpty)  // unreadable fields compare with nothing
        let pitr = PostgresStoreIdentity(systemIdentifier: "7300", timeline: 2, databaseOID: 5, tableOID: 16400)
        #expect(pitr.changes(from: recorded) == ["timeline 1 → 2"])
        let cleaned = PostgresStoreIdentity(systemIdentifier: "7300", timeline: 1, databaseOID: 5, tableOID: 16999)
        #expect(cleaned.changes(from: recorded) == ["presignatures table OID 16400 → 16999"])
        #expect(PostgresStoreIdentity("not an identity") == nil)
    }

    @Test("finding 1: PostgreSQL: a role that may not read pg_control_* is told once and compared on the OIDs")
    func finding1_postgresUnreadableControlFunctions() throws {
        guard let base = postgresTestURL else { try Test.cancel(Comment(rawValue: postgresSkipReason)) }
        guard base.contains("postgres@") else { try Test.cancel("the test URL names no postgres@ user to swap") }
        let role = "r_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        let admin = try PostgresConnection(conninfo: base)
        try admin.execute("""
            CREATE ROLE \(role) LOGIN; CREATE SCHEMA \(role) AUTHORIZATION \(role);
            REVOKE EXECUTE ON FUNCTION pg_control_system() FROM PUBLIC;
            REVOKE EXECUTE ON FUNCTION pg_control_checkpoint() FROM PUBLIC;
            """)
        defer {
            try? admin.execute("""
                GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC;
                GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO PUBLIC;
                """)
        }
        let url = base.replacingOccurrences(of: "postgres@", with: "\(role)@")
            + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(role)"
        let lines = Lines(), masterKey = NodeMasterKey.random()
        let store = try storeWithCommittedKey(.postgres(url: url), masterKey: masterKey)
        _ = store
        let watched = try NodeShareStore(location: .postgres(url: url), masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.count == 1 && lines.all.first?.contains("cannot read pg_control_system()") == true)
        try watched.storePresignature(presignature(1))
        #expect(try consume(watched, 1) == .finished(response: [1]))
        #expect(try watched.storeFences().isEmpty)
        try admin.execute("""
            GRANT EXECUTE ON FUNCTION pg_control_system() TO PUBLIC;
            GRANT EXECUTE ON FUNCTION pg_control_checkpoint() TO PUBLIC;
            """)
        // Readable again: the fields are recorded, nothing fenced.
        let reopened = try NodeShareStore(location: .postgres(url: url), masterKey: masterKey, restoreLog: lines.log)
        #expect(try reopened.storeFences().isEmpty && lines.all.count == 1)
    }

    @Test("finding 1: PostgreSQL: a changed recorded identity fences at open, naming the change")
    func finding1_postgresIdentityChangeFencesAtOpen() throws {
        let location = try scratchLocation(.postgres), masterKey = NodeMasterKey.random(), lines = Lines()
        let store = try storeWithCommittedKey(location, masterKey: masterKey)
        try store.storePresignature(presignature(1))
        // The database as recorded when the backup was taken lived elsewhere (another database OID).
        let recorded = try #require(PostgresStoreIdentity(String(decoding: try store.reading { db throws(NodeStoreError) in
            try db.first("SELECT value FROM meta WHERE name = 'store_identity'", [])?.blob(0) ?? []
        }, as: UTF8.self)))
        #expect(recorded.systemIdentifier != nil && recorded.timeline != nil)  // the test server's role may read them
        var elsewhere = recorded
        elsewhere.databaseOID = (recorded.databaseOID ?? 0) + 1
        try rawExecute(location, sqlite: "", postgres: """
            UPDATE meta SET value = convert_to('\(elsewhere.description)', 'UTF8') WHERE name = 'store_identity'
            """)
        let reopened = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        #expect(try reopened.presignatureCount(keyId: keyA) == 0)
        #expect(try reopened.storeFences().first?.reason.contains("database OID") == true)
        #expect(lines.all.count == 1)
        _ = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        #expect(lines.all.count == 1)  // recorded anew: the next open is quiet
    }

    @Test("finding 1: PostgreSQL: a re-created presignatures table under a running store is refused, then fenced")
    func finding1_postgresTableReplacedUnderRunningStore() throws {
        let location = try scratchLocation(.postgres), lines = Lines(), masterKey = NodeMasterKey.random()
        _ = try storeWithCommittedKey(location, masterKey: masterKey)
        let store = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        try store.storePresignature(presignature(1))
        try store.storePresignature(presignature(2))
        // What a `pg_restore --clean` does to the table: dropped and created again with the rows of the dump.
        try rawExecute(location, sqlite: "", postgres: """
            CREATE TABLE presignatures_copy AS SELECT * FROM presignatures;
            DROP TABLE presignatures;
            ALTER TABLE presignatures_copy RENAME TO presignatures;
            ALTER TABLE presignatures ADD PRIMARY KEY (presig_id);
            """)
        #expect(nodeError { try consume(store, 1) } == .presignatureNotFound)
        #expect(lines.all.count == 1)
        #expect(nodeError { try consume(store, 2) } == .presignatureNotFound)  // the fence ran first
        #expect(try store.storeFences().first?.reason.contains("presignatures table OID") == true)
        #expect(lines.all.count == 2)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
    }

    @Test("finding 1: PostgreSQL: after a reconnect the identity is checked again before the next consumption")
    func finding1_postgresReconnectChecksIdentity() throws {
        let location = try scratchLocation(.postgres), lines = Lines(), masterKey = NodeMasterKey.random()
        guard case .postgres(let url) = location, let name = url.components(separatedBy: "application_name=").last,
              let base = postgresTestURL else { return }
        let store = try storeWithCommittedKey(location, masterKey: masterKey)
        let watched = try NodeShareStore(location: location, masterKey: masterKey, restoreLog: lines.log)
        try store.storePresignature(presignature(1))
        let recorded = try #require(PostgresStoreIdentity(String(decoding: try store.reading { db throws(NodeStoreError) in
            try db.first("SELECT value FROM meta WHERE name = 'store_identity'", [])?.blob(0) ?? []
        }, as: UTF8.self)))
        var elsewhere = recorded
        elsewhere.systemIdentifier = "1"
        try rawExecute(location, sqlite: "", postgres: """
            UPDATE meta SET value = convert_to('\(elsewhere.description)', 'UTF8') WHERE name = 'store_identity'
            """)
        // The server drops every connection of this test (a restart, a failover).
        try PostgresConnection(conninfo: base).execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '\(name)' AND pid <> pg_backend_pid()")
        #expect(nodeError { try consume(watched, 1) } == .presignatureNotFound)  // checked inside its transaction
        #expect(lines.all.count == 1)
        #expect(try watched.storeFences().isEmpty)
        #expect(nodeError { try consume(watched, 1) } == .presignatureNotFound)  // fenced first
        #expect(try watched.storeFences().first?.reason.contains("system identifier 1 → ") == true)
        #expect(lines.all.count == 2)
        #expect(try watched.presignatureCount(keyId: keyA) == 0)
    }
}
