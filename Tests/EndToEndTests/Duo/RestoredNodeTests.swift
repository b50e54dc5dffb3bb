@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Second security review finding 1: a node database restored from a backup must not let a consumed
/// presignature be finished a second time (two ECDSA signatures with one nonce give away the key).
/// Real backup files: the SQLite database copied while the node was stopped, then put back.
/// (The time limit counts the wait for a `.heavy` turn: a whole-suite run on 2 cores takes minutes.)
@Suite("Restored node database (review 2, finding 1)", .serialized, .heavy, .timeLimit(.minutes(20)))
struct RestoredNodeTests {
    static func directory() throws -> String {
        let directory = NSTemporaryDirectory() + "silentshard-restore-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// Copies the database file and its WAL/shared-memory files (when present) from `source` to `target`,
    /// removing stale target files first: what an operator's file-level backup and restore do.
    static func copyDatabase(from source: String, to target: String) throws {
        let files = FileManager.default
        for suffix in ["", "-wal", "-shm"] {
            if files.fileExists(atPath: target + suffix) { try files.removeItem(atPath: target + suffix) }
            // The shared-memory index is rebuilt from the WAL: never copied.
            if suffix != "-shm", files.fileExists(atPath: source + suffix) {
                try files.copyItem(atPath: source + suffix, toPath: target + suffix)
            }
        }
    }

    /// A copy of the app's storage: the holder of the app's half (a stolen device, a malicious app) keeps
    /// the presignature's record from before its first finish.
    static func clone(_ storage: InMemoryStorageClient) async throws -> InMemoryStorageClient {
        let copy = InMemoryStorageClient()
        for id in storage.keyIds() {
            if let record = try await storage.read(keyId: id) { try await copy.write(record) }
        }
        return copy
    }

    /// Finishes every stored presignature of `keyshare` (there must be exactly `expected`) on `message`.
    static func finishEach(_ session: DuoSession, keyshare: Keyshare, expected: Data,
                           message: Data) async throws -> [Signature] {
        let stored = try await session.preSignatures(keyshare: keyshare)
        #expect(stored.map(\.id).contains(expected))
        var signatures: [Signature] = []
        for presignature in stored {
            signatures.append(try await session.preSignatureFinal(preSignature: presignature, message: message))
        }
        return signatures
    }

    @Test func finding1_restoredSQLiteNodeRefusesSecondFinish() async throws {
        let directory = try Self.directory()
        let path = directory + "/node.sqlite", backup = directory + "/backup.sqlite"
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let signer = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        func session(_ node: DuoNode, _ storage: InMemoryStorageClient) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"),
                                           storageClient: storage)
        }
        func start() throws -> DuoNode {
            try DuoNode.start(key: key, databasePath: path, masterKey: masterKey)
        }

        var node = try start()
        let keyshare = try await session(node, storage).keygen()
        let presignature = try await session(node, storage).preSignature(keyshare: keyshare)
        let stolen = try await Self.clone(storage)  // the app's half, before any finish
        let unused = try await session(node, storage).preSignature(keyshare: keyshare)  // the honest app's spare
        await node.server.stop()
        node = try start()  // reopen, then stop again: the backup is taken of a stopped node
        await node.server.stop()
        try Self.copyDatabase(from: path, to: backup)

        node = try start()
        let first = Data(SHA256.hash(Array("pay alice 1 BTC".utf8)))
        let signature1 = try await session(node, storage).preSignatureFinal(preSignature: presignature, message: first)
        #expect(signature1.isValid(for: first, publicKey: keyshare.publicKey))
        await node.server.stop()

        // Disk loss: the operator restores yesterday's copy.
        try Self.copyDatabase(from: backup, to: path)
        node = try start()
        let attacker = session(node, stolen)
        let second = Data(SHA256.hash(Array("pay mallory 1 BTC".utf8)))
        // The honest app's spare was fenced with the rest: its reconcile drops it; it signs the normal way.
        #expect(try await session(node, storage).preSignatures(keyshare: keyshare).map(\.id) == [unused.id])
        #expect(try await session(node, storage).reconcilePreSignatures(keyshare: keyshare).isEmpty)
        let normal = try await session(node, storage).signature(keyshare: keyshare, message: second)
        #expect(normal.isValid(for: second, publicKey: keyshare.publicKey))
        var signatures = [signature1]
        var refusal: (any Error)?
        do {
            let stolenPresignature = try #require(try await attacker.preSignatures(keyshare: keyshare).first { $0.id == presignature.id })
            signatures.append(try await attacker.preSignatureFinal(preSignature: stolenPresignature, message: second))
        } catch {
            refusal = error
        }
        #expect(signatures.count == 1, "the restored node finished a consumed presignature a second time")
        #expect(refusal as? SilentShardError == .presignatureNotFound, "refused as gone: \(String(describing: refusal))")
        // No two signatures anywhere share r.
        let rs = (signatures + [normal]).map { $0.rawRepresentation.prefix(32) }
        #expect(Set(rs).count == rs.count, "two signatures share r: \(rs.map { Hex.encode([UInt8]($0)) })")
        #expect(try node.store.presignatureCount(keyId: keyshare.keyId) == 0)
        await node.server.stop()
    }

    /// The app's stored records (key id → record), to show nothing changed.
    static func snapshot(_ storage: InMemoryStorageClient) async throws -> [String: KeyshareRecord] {
        var records: [String: KeyshareRecord] = [:]
        for id in storage.keyIds() { records[id] = try await storage.read(keyId: id) }
        return records
    }

    /// Runs `body` and returns its error (nil when it returned).
    static func failure(_ body: () async throws -> Void) async -> (any Error)? {
        do {
            try await body()
            return nil
        } catch {
            return error
        }
    }

    @Test func finding1_nodeBehindAppGenerationIsTypedAndKeepsAppShare() async throws {
        let directory = try Self.directory()
        let path = directory + "/node.sqlite", backup = directory + "/backup.sqlite"
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let signer = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        func session(_ node: DuoNode) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"),
                                           storageClient: storage)
        }
        var node = try DuoNode.start(key: key, databasePath: path, masterKey: masterKey)
        let original = try await session(node).keygen()
        await node.server.stop()
        try Self.copyDatabase(from: path, to: backup)  // the node's backup holds generation 1
        node = try DuoNode.start(key: key, databasePath: path, masterKey: masterKey)
        let refreshed = try await session(node).keyRefresh(keyshare: original)  // app and node at generation 2
        // A keyshare really behind (the node decided its generation) is still STALE_GENERATION.
        let stale = await Self.failure {
            _ = try await session(node).signature(keyshare: original, message: Data(SHA256.hash(Array("old".utf8))))
        }
        #expect(stale as? SilentShardError == .staleKeyshare, "\(String(describing: stale))")
        await node.server.stop()

        try Self.copyDatabase(from: backup, to: path)  // the operator restores the older backup
        node = try DuoNode.start(key: key, databasePath: path, masterKey: masterKey)
        let before = try await Self.snapshot(storage)
        let hash = Data(SHA256.hash(Array("after the restore".utf8)))
        let signing = await Self.failure { _ = try await session(node).signature(keyshare: refreshed, message: hash) }
        #expect(signing as? SilentShardError == .nodeBehind(keyId: nil), "\(String(describing: signing))")
        let reconciling = await Self.failure { _ = try await session(node).reconcileKeyshare(keyId: refreshed.keyId) }
        #expect(reconciling as? SilentShardError == .nodeBehind(keyId: nil), "\(String(describing: reconciling))")
        // The dangerous path: restoring the app's own older backup must not replace its newer share.
        let restoring = await Self.failure { _ = try await session(node).restoreBackup(original) }
        #expect(restoring as? SilentShardError == .nodeBehind(keyId: nil), "\(String(describing: restoring))")
        #expect(try await Self.snapshot(storage) == before, "the app's stored share changed")
        await node.server.stop()
    }

    // MARK: PostgreSQL: pg_dump / pg_restore

    /// Runs a PostgreSQL client tool of the newest installed server (`/usr/lib/postgresql/*/bin`); the test
    /// is cancelled when there is none.
    static func postgresTool(_ name: String, _ arguments: [String]) throws {
        let versions = (try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib/postgresql")) ?? []
        guard let version = versions.sorted(by: { $0.compare($1, options: .numeric) == .orderedAscending }).last,
              FileManager.default.isExecutableFile(atPath: "/usr/lib/postgresql/\(version)/bin/\(name)")
        else { try Test.cancel("no \(name) under /usr/lib/postgresql/*/bin") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/lib/postgresql/\(version)/bin/\(name)")
        process.arguments = arguments
        let errors = Pipe()
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw NodeStoreError.io(operation: "\(name): \(String(decoding: message, as: UTF8.self))", errno: 0)
        }
    }

    /// `url` (libpq URL form) naming database `name` instead.
    static func url(_ url: String, database name: String) -> String {
        let query = url.firstIndex(of: "?").map { String(url[$0...]) } ?? ""
        let base = url.firstIndex(of: "?").map { String(url[..<$0]) } ?? url
        guard let slash = base.lastIndex(of: "/") else { return url }
        return base[...slash] + name + query
    }

    enum PostgresRestore: String, CaseIterable, CustomStringConvertible {
        /// `pg_restore` into a newly created database.
        case newDatabase
        /// `pg_restore --clean` into the same database (the tables are dropped and created again).
        case cleanSameDatabase

        var description: String { rawValue }
    }

    @Test(arguments: PostgresRestore.allCases)
    func finding1_restoredPostgresNodeRefusesSecondFinish(restore: PostgresRestore) async throws {
        guard let server = DuoOnPostgresTests.url else {
            try Test.cancel("SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL e2e skipped (scripts/test starts a server)")
        }
        let schema = "restore_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresConnection(conninfo: server).execute("CREATE SCHEMA \(schema)")
        func selecting(_ url: String) -> String { url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)" }
        let database = selecting(server)
        let dump = try Self.directory() + "/node.dump"
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let signer = SoftwareEd25519MessageSigner(), storage = InMemoryStorageClient()
        func session(_ node: NodeServer, _ storage: InMemoryStorageClient) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.port)"),
                                           storageClient: storage)
        }

        var (node, _) = try DuoOnPostgresTests.startNode(key: key, database: database, masterKey: masterKey)
        let keyshare = try await session(node, storage).keygen()
        let presignature = try await session(node, storage).preSignature(keyshare: keyshare)
        let stolen = try await Self.clone(storage)
        await node.stop()
        try Self.postgresTool("pg_dump", ["--format=custom", "--schema=\(schema)", "--file=\(dump)", server])

        (node, _) = try DuoOnPostgresTests.startNode(key: key, database: database, masterKey: masterKey)
        let first = Data(SHA256.hash(Array("pay alice 1 BTC".utf8)))
        let signature1 = try await session(node, storage).preSignatureFinal(preSignature: presignature, message: first)
        #expect(signature1.isValid(for: first, publicKey: keyshare.publicKey))
        await node.stop()

        let restored: String
        switch restore {
        case .newDatabase:
            let name = "db_" + schema
            try PostgresConnection(conninfo: server).execute("CREATE DATABASE \(name)")
            try Self.postgresTool("pg_restore", ["--dbname=\(Self.url(server, database: name))", dump])
            restored = selecting(Self.url(server, database: name))
        case .cleanSameDatabase:
            try Self.postgresTool("pg_restore", ["--clean", "--if-exists", "--dbname=\(server)", dump])
            restored = database
        }
        let (restoredNode, restoredStore) = try DuoOnPostgresTests.startNode(key: key, database: restored, masterKey: masterKey)
        let second = Data(SHA256.hash(Array("pay mallory 1 BTC".utf8)))
        var signatures = [signature1]
        var refusal: (any Error)?
        do {
            signatures += try await Self.finishEach(session(restoredNode, stolen), keyshare: keyshare, expected: presignature.id,
                                                    message: second)
        } catch {
            refusal = error
        }
        #expect(signatures.count == 1, "the restored node finished a consumed presignature a second time")
        #expect(refusal as? SilentShardError == .presignatureNotFound, "refused as gone: \(String(describing: refusal))")
        let rs = signatures.map { $0.rawRepresentation.prefix(32) }
        #expect(Set(rs).count == rs.count, "two signatures share r")
        let fences = try restoredStore.storeFences()
        #expect(fences.count == 1 && fences.first?.presignaturesDeleted == 1)
        #expect(fences.first?.reason.contains(restore == .newDatabase ? "database OID" : "presignatures table OID") == true)
        await restoredNode.stop()
    }
}
