import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import Testing
import duo
#if canImport(Glibc)
import Glibc
#endif

/// Issue 10: 500 simultaneous half-open connections (TCP connected, then nothing, or half an HTTP
/// upgrade) do not stop the node from serving an honest app; afterwards it still serves.
@Suite("Node under 500 half-open connections")
struct HalfOpenConnectionsTests {
    /// A blocking TCP connect to 127.0.0.1:`port`; the descriptor, or nil.
    static func connectSocket(port: Int) -> Int32? {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            return nil
        }
        return fd
    }

    @Test func honestAppIsServedBeside500HalfOpenConnections() async throws {
        let node = try DuoOverWebSocketTests.startNode()
        let port = node.server.port
        var descriptors: [Int32] = []
        defer { for fd in descriptors { close(fd) } }
        let partial = Array("GET /v3/ecdsa/keygen HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\n".utf8)
        for index in 0..<500 {
            guard let fd = Self.connectSocket(port: port) else { continue }
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
        #expect(try DuoOverWebSocketTests.verifies(try await session.signature(keyshare: keyshare, message: hash),
                                                   message: hash, keyshare: keyshare))
        for fd in descriptors { close(fd) }
        descriptors.removeAll()
        // Still serving after they went away.
        #expect(try DuoOverWebSocketTests.verifies(try await session.signature(keyshare: keyshare, message: hash),
                                                   message: hash, keyshare: keyshare))
        await node.server.stop()
    }
}
