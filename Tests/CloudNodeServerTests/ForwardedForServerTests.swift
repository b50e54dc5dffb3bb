import CloudNode
import SilentShardCore
import Foundation
import SilentShardTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Second review finding 11: behind a trusted proxy, a request whose `X-Forwarded-For` was missing,
/// unreadable or too long was counted against the proxy's own address — so one client could spend (or
/// block) the limits of every client behind the proxy. Such requests are now refused before anything
/// is counted: 400 when the header is missing or malformed, 431 when it is too long, for WebSocket
/// upgrades and POSTs alike.
@Suite("Finding 11: a trusted proxy's bad X-Forwarded-For is refused, not counted against the proxy",
       .serialized, .timeLimit(.minutes(2)))
struct ForwardedForServerTests {
    static func node() throws -> (TestNode, NodeRateLimiter) {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(connectionsPerAddress: 1, trustedProxies: ["127.0.0.1"]))
        return (try TestNode.start(rateLimiter: limiter), limiter)
    }

    static func upgradeHead(_ port: Int, headers: [String]) async throws -> String {
        try await offPool {
            guard let (fd, head) = LoopbackSocket.upgrade(port: port, headers: headers) else { throw NetworkError.connectionLost }
            close(fd)
            return head
        }
    }

    static func postHead(_ port: Int, headers: [String]) async throws -> String {
        try await offPool {
            guard let fd = LoopbackSocket.postHead(port: port, path: "/v3/trio/presign-final", contentLength: 1,
                                                   headers: headers) else { throw NetworkError.connectionLost }
            defer { close(fd) }
            _ = [UInt8(1)].withUnsafeBytes { send(fd, $0.baseAddress, 1, Int32(MSG_NOSIGNAL)) }
            return LoopbackSocket.readHead(fd)
        }
    }

    static let oversized = "X-Forwarded-For: " + Array(repeating: "203.0.113.9", count: 400).joined(separator: ", ")

    @Test func finding11_missingOrMalformedForwardedForIsRefusedWith400() async throws {
        let (node, limiter) = try Self.node()
        for headers in [[], ["X-Forwarded-For: not-an-address"], ["X-Forwarded-For: , "]] {
            let upgrade = try await Self.upgradeHead(node.port, headers: headers)
            #expect(upgrade.hasPrefix("HTTP/1.1 400"), "upgrade \(headers): \(upgrade)")
            let post = try await Self.postHead(node.port, headers: headers)
            #expect(post.hasPrefix("HTTP/1.1 400"), "POST \(headers): \(post)")
        }
        // Nothing was counted against the proxy: a client behind it still gets its place.
        #expect(limiter.openConnections(from: "127.0.0.1") == 0)
        let (fd, head) = try await offPool {
            LoopbackSocket.upgrade(port: node.port, headers: ["X-Forwarded-For: 198.51.100.20"]) ?? (-1, "")
        }
        if fd >= 0 { close(fd) }
        #expect(head.hasPrefix("HTTP/1.1 101"), "\(head)")
        await node.server.stop()
    }

    @Test func finding11_oversizedForwardedForIsRefusedWith431() async throws {
        let (node, limiter) = try Self.node()
        let upgrade = try await Self.upgradeHead(node.port, headers: [Self.oversized])
        #expect(upgrade.hasPrefix("HTTP/1.1 431"), "\(upgrade)")
        let post = try await Self.postHead(node.port, headers: [Self.oversized])
        #expect(post.hasPrefix("HTTP/1.1 431"), "\(post)")
        #expect(limiter.openConnections(from: "127.0.0.1") == 0)
        await node.server.stop()
    }
}
