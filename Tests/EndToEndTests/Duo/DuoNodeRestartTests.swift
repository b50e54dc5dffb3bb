import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Duo's node restarted over real sockets: a new process on the same database with the same keys serves
/// the key made before. (Trio's restarts: `Trio/TrioPresignatureRestartTests`, the command-line suites.)
@Suite("Duo end to end: a node restart over loopback WebSocket", .serialized, .heavy, .timeLimit(.minutes(30)))
struct DuoNodeRestartTests {
    @Test func sharesSurviveANodeRestart() async throws {
        let directory = NSTemporaryDirectory() + "silentshard-e2e-restart-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = Ed25519.SigningKey(), masterKey = NodeMasterKey.random()
        let storage = InMemoryStorageClient(), signer = SoftwareEd25519MessageSigner()
        func session(_ node: DuoNode) -> DuoSession {
            SilentShard.ECDSA.duoInitiator(messageSigner: signer, cloudVerifyingKey: Hex.encode(key.verifyingKey.bytes),
                                           websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(node.server.port)"),
                                           storageClient: storage)
        }
        let first = try DuoNode.start(key: key, databasePath: directory + "/node.sqlite", masterKey: masterKey)
        let keyshare = try await session(first).keygen()
        await first.server.stop()
        // A new process would reopen the same database with the same keys.
        let second = try DuoNode.start(key: key, databasePath: directory + "/node.sqlite", masterKey: masterKey)
        let hash = Data(SHA256.hash(Array("after restart".utf8)))
        let signature = try await session(second).signature(keyshare: keyshare, message: hash)
        #expect(try EndToEnd.verifies(signature, message: hash, keyshare: keyshare))
        await second.server.stop()
    }
}
