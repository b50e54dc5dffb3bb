import CSQLite
import Foundation
import Testing
@testable import CloudNode
import SilentShardCore

@Suite("Node share store: schema migrations and locations", .timeLimit(.minutes(30)))
struct MigrationTests {
    @Test("a SQLite file from before migrations (no schema_migrations table) opens, keeps its rows, is recorded at version 1 and migrated on")
    func legacySQLiteFileOpens() throws {
        let path = scratchPath()
        let masterKey = NodeMasterKey.random()
        let store = try storeWithCommittedKey(path: path, masterKey: masterKey)
        try store.storePresignature(NodePresignature(id: bytes32(3), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: Date().addingTimeInterval(600), secret: secretShare(3, count: 64)))
        // Make it look like a file written by the SQLite-only releases (schema 1: no lease process column, no key_parents,
        // no retired_keys, no rate-limit tables).
        try SQLiteConnection(path: path).execute("""
            DROP TABLE schema_migrations; ALTER TABLE leases DROP COLUMN process; DROP TABLE key_parents; DROP TABLE retired_keys;
            DROP TABLE rate_events; DROP TABLE rate_blocks;
            ALTER TABLE presignatures DROP COLUMN epoch; DROP TABLE store_fences;
            DELETE FROM meta WHERE name IN ('presign_epoch', 'store_instance', 'witness_counter')
            """)
        try FileManager.default.removeItem(atPath: path + "-witness")  // those releases wrote none
        let reopened = try NodeShareStore(path: path, masterKey: masterKey)
        #expect(try reopened.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        #expect(try reopened.presignatureCount(keyId: keyA) == 1)
        let versions = try reopened.reading { db throws(NodeStoreError) in
            try db.query("SELECT version FROM schema_migrations", []).map { row throws(NodeStoreError) in try row.integer(0) }
        }
        #expect(versions.sorted() == Array(1...Int64(NodeStoreMigrations.latest)))
        try reopened.acquireLease(keyId: keyA, holder: bytes32(9), seconds: 60)
        try reopened.recordRateEvent(RateBucket(kind: "test", key: "k"), limit: 1, windowMilliseconds: 1000, nowMilliseconds: 1)
    }

    @Test("migration 5 (P5): a database at version 4 gains the cluster-shared rate-limit tables and keeps its rows",
          arguments: StoreBackend.allCases)
    func migrationFiveAddsRateLimitTables(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let masterKey = NodeMasterKey.random()
        _ = try storeWithCommittedKey(location, masterKey: masterKey)
        try rawExecute(location, sqlite: "DROP TABLE rate_events; DROP TABLE rate_blocks; DELETE FROM schema_migrations WHERE version = 5",
                       postgres: "DROP TABLE rate_events; DROP TABLE rate_blocks; DELETE FROM schema_migrations WHERE version = 5")
        let reopened = try NodeShareStore(location: location, masterKey: masterKey)
        #expect(try reopened.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        let versions = try reopened.reading { db throws(NodeStoreError) in
            try db.query("SELECT version FROM schema_migrations", []).map { row throws(NodeStoreError) in try row.integer(0) }
        }
        #expect(versions.sorted() == Array(1...Int64(NodeStoreMigrations.latest)) && NodeStoreMigrations.latest >= 5)
        let bucket = RateBucket(kind: "test", key: "k")
        try reopened.blockRateBucket(bucket, untilMilliseconds: 2000, nowMilliseconds: 1000)
        #expect(try reopened.rateBlockWait(bucket, nowMilliseconds: 1000) == 1000)
        // A second open (another process starting) applies nothing again.
        _ = try NodeShareStore(location: location, masterKey: masterKey)
        #expect(try reopened.rateRowCount() == 1)
    }

    @Test("locations: postgres URLs are PostgreSQL, anything else a SQLite path; passwords never shown")
    func locations() {
        guard case .postgres = NodeStoreLocation("postgres://u:secret@db:5432/node") else {
            Issue.record("postgres:// not recognized")
            return
        }
        guard case .postgres = NodeStoreLocation("postgresql://db/node"), case .sqlite(let path) = NodeStoreLocation("/var/lib/node.sqlite")
        else {
            Issue.record("location parsing")
            return
        }
        #expect(path == "/var/lib/node.sqlite")
        let redacted = [
            NodeStoreLocation("postgres://u:s3cr3t@db:5432/node?sslmode=require").redactedDescription,
            NodeStoreLocation("postgresql://u@db/node?password=s3cr3t&sslmode=require").redactedDescription,
            PostgresURL.redacted("host=db password=s3cr3t user=u"),
        ]
        #expect(redacted[0] == "postgres://u:***@db:5432/node?sslmode=require")
        #expect(redacted[1] == "postgresql://u@db/node?password=***&sslmode=require")
        #expect(redacted[2] == "host=db password=*** user=u")
        #expect(redacted.allSatisfy { !$0.contains("s3cr3t") })
        #expect(PostgresURL.scrub("failed for \"p%41ss\" and pAss", conninfo: "postgres://u:p%41ss@h/d") == "failed for \"***\" and ***")
    }

    @Test("a malformed or unreachable PostgreSQL URL is a typed error that never shows the password")
    func badURLsHideThePassword() {
        for url in ["postgres://u:hunter%zz@127.0.0.1:1/db", "postgresql://u:hunter2@127.0.0.1:1/db?connect_timeout=2",
                    "postgresql://u:hunter2@127.0.0.1:1/db?bogus_option=1", "host=127.0.0.1 port=x password=hunter2"] {
            do {
                _ = try PostgresConnection(conninfo: url)
                Issue.record("connected to \(PostgresURL.redacted(url))")
            } catch {
                #expect(error.sqlState == "08001")
                #expect(!"\(error)".contains("hunter"), "\(error)")
            }
        }
    }

    @Test("PostgreSQL errors carry the SQLSTATE, not the values bound")
    func postgresErrorsCarryNoValues() throws {
        let location = try scratchLocation(.postgres)
        guard case .postgres(let url) = location else { return }
        let connection = try PostgresConnection(conninfo: url)
        try connection.execute("CREATE TABLE t (k BYTEA PRIMARY KEY)")
        let secret = secretShare(9, count: 32)
        try connection.query("INSERT INTO t (k) VALUES ($1)", [.blob(secret)])
        do {
            try connection.query("INSERT INTO t (k) VALUES ($1)", [.blob(secret)])
            Issue.record("duplicate key accepted")
        } catch {
            #expect(error.sqlState == PostgresError.uniqueViolation)
            #expect(!"\(error)".lowercased().contains(hex(Array(secret.prefix(6)))))
        }
        // Integers and text read back with their types; a wrong type is `corrupt`, never a trap.
        let rows = try connection.query("SELECT 7::int2, 8::int4, -9::int8, 'x'::text, NULL::bytea", []).rows
        #expect(rows == [[.integer(7), .integer(8), .integer(-9), .text("x"), .null]])
        #expect(throws: PostgresError.self) { try connection.query("SELECT 1.5::float8", []) }
        // An unreachable server is a typed connection error.
        #expect(throws: NodeStoreError.self) {
            try NodeShareStore(location: .postgres(url: "postgresql://nobody@127.0.0.1:1/none?connect_timeout=2"), masterKey: .random())
        }
    }
}
