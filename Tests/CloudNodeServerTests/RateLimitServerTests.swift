import CloudNode
import duo
import Foundation
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio
#if canImport(Glibc)
import Glibc
#endif

/// session.md §9.5 at the server: per-address connection counts and the block after failed authentications,
/// answered with HTTP 429 and `Retry-After` (upgrades and POSTs).
@Suite("session.md §9.5 rate limits at the server: 429 with Retry-After", .timeLimit(.minutes(30)))
struct RateLimitServerTests {
    /// Sends a WebSocket upgrade on a raw socket and returns the response head (status line and headers).
    static func rawUpgradeResponse(port: Int) throws -> String {
        guard let (fd, head) = LoopbackSocket.upgrade(port: port) else { throw NetworkError.connectionLost }
        close(fd)
        return head
    }

    /// The `Retry-After` value of a response head, if any.
    static func retryAfter(_ head: String) -> Int? {
        head.split(separator: "\r\n").first { $0.lowercased().hasPrefix("retry-after:") }
            .flatMap { Int($0.dropFirst("retry-after:".count).trimmingCharacters(in: .whitespaces)) }
    }

    @Test("failed tokens block the address: upgrades and POSTs get 429 with Retry-After, even with a good token")
    func failedAuthenticationsBlockTheAddress() async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 3, blockSeconds: 600))
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "good"), rateLimiter: limiter)
        // Before: served.
        let good = DuoNetworkClient(websocketConfig: node.clientConfig(token: "good"))
        try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await good.send(bytes: Data([1]))
        #expect(try await good.read() == Data([1]))
        try await good.disconnect()
        // Three refused tokens.
        for _ in 0..<3 {
            let bad = DuoNetworkClient(websocketConfig: node.clientConfig(token: "bad"))
            try await bad.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            #expect(closeCode(await thrownError { _ = try await bad.read() }) == Int(NodeCloseCode.unauthorized.rawValue))
            try? await bad.disconnect()
        }
        // Now the address is blocked, whatever the token.
        #expect(await thrownError { try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil) } as? NetworkError
            == .handshakeRejected(status: 429))
        let head = try await offPool { try Self.rawUpgradeResponse(port: node.port) }
        #expect(head.hasPrefix("HTTP/1.1 429"), "\(head)")
        #expect(Self.retryAfter(head).map { (61...600).contains($0) } == true, "\(head)")
        let post = TrioNetworkClient(websocketConfig: node.clientConfig(token: "good"))
        #expect(await thrownError { _ = try await post.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: nil, body: Data([1])) }
            as? NetworkError == .httpStatus(429))
        #expect(node.log.contains("rate limited (127.0.0.1"))
        let metrics = node.server.metricsText()
        #expect(metrics.contains("silentshard_node_addresses_blocked_total 1"))
        #expect(metrics.contains("silentshard_node_rate_limited_total{limit=\"blocked-address\"} 3"), "\(metrics)")
        #expect(!metrics.contains("127.0.0.1"), "metrics name no addresses")
        await node.server.stop()
    }

    @Test("open connections per address: the next upgrade gets 429 until one closes")
    func connectionsPerAddress() async throws {
        let limiter = NodeRateLimiter(limits: NodeRateLimits(connectionsPerAddress: 2))
        let node = try TestNode.start(rateLimiter: limiter)
        var open = try await openEchoClients(node, count: 2)
        let extra = DuoNetworkClient(websocketConfig: node.clientConfig())
        #expect(await thrownError { try await extra.connect(action: DuoAction.ECDSA.Keygen(), params: nil) } as? NetworkError
            == .handshakeRejected(status: 429))
        let head = try await offPool { try Self.rawUpgradeResponse(port: node.port) }
        #expect(head.hasPrefix("HTTP/1.1 429") && Self.retryAfter(head) == 1, "\(head)")
        #expect(limiter.refusals(.connectionsPerAddress) == 2)
        try await open.removeFirst().disconnect()
        // The place comes back once the server saw the close.
        #expect(try await connectOnceAccepted(extra))
        try await extra.send(bytes: Data([2]))
        #expect(try await extra.read() == Data([2]))
        try await extra.disconnect()
        for client in open { try await client.disconnect() }
        await node.server.stop()
    }
}
