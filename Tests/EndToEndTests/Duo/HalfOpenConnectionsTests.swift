import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo
#if canImport(Glibc)
import Glibc
#endif

/// Issue 10: 500 simultaneous half-open connections (TCP connected, then nothing, or half an HTTP
/// upgrade) do not stop the node from serving an honest app; afterwards it still serves.
@Suite("Node under 500 half-open connections", .heavy, .timeLimit(.minutes(30)))
struct HalfOpenConnectionsTests {
    @Test func honestAppIsServedBeside500HalfOpenConnections() async throws {
        let node = try DuoNode.start()
        let port = node.server.port
        var descriptors: [Int32] = []
        defer { for fd in descriptors { close(fd) } }
        let partial = Array("GET /v3/ecdsa/keygen HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n".utf8)
        for index in 0..<500 {
            guard let fd = LoopbackSocket.connect(port: port) else { continue }
            if index % 2 == 1 { _ = partial.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
            descriptors.append(fd)
        }
        #expect(descriptors.count == 500)

        let cloudKey = Hex.encode(node.key.verifyingKey.bytes)
        let session = SilentShard.ECDSA.duoInitiator(messageSigner: SoftwareEd25519MessageSigner(), cloudVerifyingKey: cloudKey,
                                                     websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:\(port)"),
                                                     storageClient: InMemoryStorageClient())
        let keyshare = try await session.keygen()
        let hash = Data(SHA256.hash(Array("half-open".utf8)))
        #expect(try EndToEnd.verifies(try await session.signature(keyshare: keyshare, message: hash),
                                                   message: hash, keyshare: keyshare))
        for fd in descriptors { close(fd) }
        descriptors.removeAll()
        // Still serving after they went away.
        #expect(try EndToEnd.verifies(try await session.signature(keyshare: keyshare, message: hash),
                                                   message: hash, keyshare: keyshare))
        await node.server.stop()
    }
}
