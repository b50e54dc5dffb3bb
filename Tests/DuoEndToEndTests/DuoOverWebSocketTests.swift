import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// The duo SDK against a real node: `duoInitiator(websocketConfig:)` → our WebSocket client → loopback
/// TCP → the libwebsockets node server → the node's session runner and SQLite share store.
@Suite("Duo end to end over loopback WebSocket", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoOverWebSocketTests {
    struct Node {
        let server: NodeServer
        let key: Ed25519.SigningKey
        let store: NodeShareStore
    }

    static func startNode(key: Ed25519.SigningKey = Ed25519.SigningKey(), databasePath: String? = nil,
                          masterKey: NodeMasterKey = .random(), verifier: any TokenVerifier = NoTokenVerifier()) throws -> Node {
        let path: String
        if let databasePath {
            path = databasePath
        } else {
            let directory = NSTemporaryDirectory() + "silentshard-e2e-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            path = directory + "/node.sqlite"
        }
        let store = try NodeShareStore(path: path, masterKey: masterKey)
        let runner = NodeStepRunner(nodeKey: key, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: key, verifier: verifier,
            stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
            postHandler: NodePostHandler(runner: runner), logger: .silent))
        _ = try server.start()
        return Node(server: server, key: key, store: store)
    }

    @Test func sharesSurviveANodeRestart() async throws {
        let directory = NSTemporaryDirectory() + "silentshard-e2e-restart-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let storage = InMemoryStorageClient(), signer = SoftwareEd25519MessageSigner()
        func session(_ node: Node) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"),
                                           storageClient: storage)
        }
        let first = try Self.startNode(key: key, databasePath: directory + "/node.sqlite", masterKey: masterKey)
        let keyshare = try await session(first).keygen()
        await first.server.stop()
        // A new process would reopen the same database with the same keys.
        let second = try Self.startNode(key: key, databasePath: directory + "/node.sqlite", masterKey: masterKey)
        let hash = Data(SHA256.hash(Array("after restart".utf8)))
        let signature = try await session(second).signature(keyshare: keyshare, message: hash)
        #expect(try Self.verifies(signature, message: hash, keyshare: keyshare))
        await second.server.stop()
    }

    @Test func tokensAreCheckedBeforeAnyProtocolWork() async throws {
        let node = try Self.startNode(verifier: try StaticTokenVerifier(token: "app-token-1"))
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes)
        func session(token: String?) -> DuoSession {
            SilentShard.EdDSA.duoInitiator(
                messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)", authenticationToken: token),
                storageClient: InMemoryStorageClient())
        }
        await #expect(throws: SilentShardError.self) { _ = try await session(token: "wrong").keygen() }
        await #expect(throws: SilentShardError.self) { _ = try await session(token: nil).keygen() }
        // The node keeps serving: the right token works.
        let keyshare = try await session(token: "app-token-1").keygen()
        #expect(keyshare.publicKey.count == 32)
        await node.server.stop()
    }

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func keygenSignRefreshSign(algorithm: Keyshare.Algorithm) async throws {
        let node = try Self.startNode()
        let config = WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)")
        let cloudKey = Hex.encode(node.key.verifyingKey.bytes)
        let storage = InMemoryStorageClient()
        let signer = SoftwareEd25519MessageSigner()
        let session = algorithm == .ecdsa
            ? SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                             storageClient: storage)
            : SilentShard.EdDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: cloudKey, websocketConfig: config,
                                             storageClient: storage)
        let keyshare = try await session.keygen()
        print("e2e \(algorithm): key \(Hex.encode(Array(keyshare.publicKey)))")
        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("over the wire".utf8))) : Data("over the wire".utf8)
        let first = try await session.signature(keyshare: keyshare, message: message)
        #expect(try Self.verifies(first, message: message, keyshare: keyshare))
        let refreshed = try await session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.publicKey == keyshare.publicKey)
        let second = try await session.signature(keyshare: refreshed, message: message)
        #expect(try Self.verifies(second, message: message, keyshare: refreshed))
        await node.server.stop()
    }

    @Test func wrongCloudKeyIsATypedError() async throws {
        let node = try Self.startNode()
        let session = SilentShard.ECDSA.duoInitiator(
            messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: Hex.encode(Ed25519.SigningKey().verifyingKey.bytes),
            websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"), storageClient: InMemoryStorageClient())
        await #expect(throws: SilentShardError.self) { _ = try await session.keygen() }
        await node.server.stop()
    }

    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        signature.isValid(for: message, publicKey: keyshare.publicKey)
    }
}
