@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// The duo SDK against two node servers sharing one PostgreSQL database (two store instances = two
/// connections, as two processes of a cluster): keygen on one, sign on the other, refresh on the
/// first, sign on the second. Needs `SILENTSHARD_TEST_POSTGRES_URL` (scripts/test starts a server).
@Suite("Duo end to end with the node on PostgreSQL", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoOnPostgresTests {
    static let url: String? = {
        let value = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_POSTGRES_URL"] ?? ""
        return value.isEmpty ? nil : value
    }()

    /// A fresh schema on the test server, selected through the URL's `search_path`.
    static func scratchDatabase() throws -> String {
        guard let url else {
            try Test.cancel("SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL e2e skipped (scripts/test starts a server)")
        }
        let schema = "e2e_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresConnection(conninfo: url).execute("CREATE SCHEMA \(schema)")
        return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    static func startNode(key: Ed25519.SigningKey, database: String, masterKey: NodeMasterKey) throws -> (NodeServer, NodeShareStore) {
        let store = try NodeShareStore(location: .postgres(url: database), masterKey: masterKey)
        let runner = NodeStepRunner(nodeKey: key, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: key, verifier: NoTokenVerifier(),
            stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
            postHandler: NodePostHandler(runner: runner), logger: .silent))
        _ = try server.start()
        return (server, store)
    }

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func keygenSignRefreshSignAcrossTwoNodes(algorithm: Keyshare.Algorithm) async throws {
        let database = try Self.scratchDatabase()
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let (first, firstStore) = try Self.startNode(key: key, database: database, masterKey: masterKey)
        let (second, _) = try Self.startNode(key: key, database: database, masterKey: masterKey)
        let storage = InMemoryStorageClient(), signer = SoftwareEd25519MessageSigner()
        func session(_ server: NodeServer) -> DuoSession {
            let config = WebsocketConfig(url: "ws://127.0.0.1:\(server.port)")
            let cloudKey = Hex.encode(key.verifyingKey.bytes)
            return algorithm == .ecdsa
                ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                                 storageClient: storage)
                : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                                 storageClient: storage)
        }
        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("cluster".utf8))) : Data("cluster".utf8)
        let keyshare = try await session(first).keygen()
        let signature = try await session(second).signature(keyshare: keyshare, message: message)
        #expect(signature.isValid(for: message, publicKey: keyshare.publicKey))
        let refreshed = try await session(first).keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey)
        let again = try await session(second).signature(keyshare: refreshed, message: message)
        #expect(again.isValid(for: message, publicKey: refreshed.publicKey))
        #expect(try firstStore.keyCount() == 1)
        await first.stop()
        await second.stop()
    }
}
