import CloudNode
import duo
import Foundation
import SilentShardCore
import SilentShardTestSupport
import Testing

/// Security review finding 10 (first half): a hook verifier that cannot be reached said nothing about the
/// client, yet each such connection counted as a failed authentication, so an outage of the operator's
/// hook got every client address blocked for ten minutes. Now it is "try again later": close 1013 on a
/// WebSocket, 503 on a POST, and nothing is counted against the address.
@Suite("Finding 10: a hook outage is unavailability, not a failed authentication", .timeLimit(.minutes(30)))
struct HookOutageTests {
    @Test func unreachableHookDoesNotBlockTheAddress() async throws {
        let closed = try RecordingHTTPServer()
        let port = closed.port
        closed.stop()   // nothing listens there any more
        let limiter = NodeRateLimiter(limits: NodeRateLimits(failedAuthenticationsPerMinute: 2, blockSeconds: 600))
        let node = try TestNode.start(verifier: try HookTokenVerifier(url: "http://127.0.0.1:\(port)/verify", timeout: .seconds(5)),
                                      rateLimiter: limiter)
        for _ in 0..<4 {
            let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: "t"))
            try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            let error = await thrownError {
                try? await client.send(bytes: Data([7]))
                _ = try await client.read()
            }
            #expect(closeCode(error) == Int(NodeCloseCode.overloaded.rawValue))
            try? await client.disconnect()
        }
        // Not blocked: the upgrade is still accepted (a block would answer 429).
        let again = DuoNetworkClient(websocketConfig: node.clientConfig(token: "t"))
        try await again.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try? await again.disconnect()
        // A POST during the outage: 503.
        let url = try #require(URL(string: "\(node.httpURL)/v3/ecdsa/export"))
        await #expect(throws: NetworkError.httpStatus(503)) {
            _ = try await WebSocketTransport.post(url: url, body: Data([1]), bearerToken: "t",
                                                  settings: WebSocketSettings(WebsocketConfig(url: node.wsURL)))
        }
        await node.server.stop()
    }
}
