import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Second security review finding 1: a node database restored from a backup must not let a consumed
/// presignature be finished a second time (two ECDSA signatures with one nonce give away the key).
/// Real backup files: the SQLite database copied while the node was stopped, then put back.
@Suite("Restored node database (review 2, finding 1)", .serialized, .heavy, .timeLimit(.minutes(5)))
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
        #expect(stored.map(\.id) == [expected])
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
        func session(_ node: DuoOverWebSocketTests.Node, _ storage: InMemoryStorageClient) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"),
                                           storageClient: storage)
        }
        func start() throws -> DuoOverWebSocketTests.Node {
            try DuoOverWebSocketTests.startNode(key: key, databasePath: path, masterKey: masterKey)
        }

        var node = try start()
        let keyshare = try await session(node, storage).keygen()
        let presignature = try await session(node, storage).preSignature(keyshare: keyshare)
        let stolen = try await Self.clone(storage)  // the app's half, before any finish
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
        var signatures = [signature1]
        var refusal: (any Error)?
        do {
            signatures += try await Self.finishEach(attacker, keyshare: keyshare, expected: presignature.id, message: second)
        } catch {
            refusal = error
        }
        #expect(signatures.count == 1, "the restored node finished a consumed presignature a second time")
        #expect(refusal as? SilentShardError == .presignatureNotFound, "refused as gone: \(String(describing: refusal))")
        // No two signatures anywhere share r.
        let rs = signatures.map { $0.rawRepresentation.prefix(32) }
        #expect(Set(rs).count == rs.count, "two signatures share r: \(rs.map { Hex.encode([UInt8]($0)) })")
        #expect(try node.store.presignatureCount(keyId: keyshare.keyId) == 0)
        await node.server.stop()
    }
}
