@testable import CloudNode
import duo
import Foundation
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio

/// P5 at the server (`docs/protocol/session.md` §9.5): an address blocked for failed tokens at one process of a
/// cluster is refused by another process on the same database — the session's check before its token
/// closes with 1013, and from then on that process's door answers 429 without asking the database.
@Suite("session.md §9.5 at the server: an address block reaches every process of the cluster (P5)", .timeLimit(.minutes(30)))
struct ClusterRateLimitServerTests {
    @Test("failed tokens at process 0 block the address at process 1: its session closes with 1013, then its door answers 429")
    func blockReachesTheOtherProcess() async throws {
        let clock = ManualClock()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("cluster-block-\(UUID().uuidString).sqlite").path
        let masterKey = NodeMasterKey.random()
        let limits = NodeRateLimits(failedAuthenticationsPerMinute: 3, blockSeconds: 600)
        let nodes = try (0..<2).map { _ in
            let store = try NodeShareStore(path: path, masterKey: masterKey)
            let limiter = NodeRateLimiter(limits: limits, clock: clock.read, cluster: ClusterRateLimits(store: store, clock: clock.read))
            return try TestNode.start(verifier: try StaticTokenVerifier(token: "good"), rateLimiter: limiter)
        }
        for _ in 0..<3 {
            let bad = DuoNetworkClient(websocketConfig: nodes[0].clientConfig(token: "bad"))
            try await bad.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
            #expect(closeCode(await thrownError { _ = try await bad.read() }) == Int(NodeCloseCode.unauthorized.rawValue))
            try? await bad.disconnect()
        }
        // Process 1 has seen no failure itself: its door lets the upgrade in, the session's check refuses it.
        let good = DuoNetworkClient(websocketConfig: nodes[1].clientConfig(token: "good"))
        try await good.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        #expect(closeCode(await thrownError { _ = try await good.read() }) == Int(NodeCloseCode.overloaded.rawValue))
        try? await good.disconnect()
        // From now on its door refuses the address (429 with the remaining block), POSTs too.
        let head = try await offPool { try RateLimitServerTests.rawUpgradeResponse(port: nodes[1].port) }
        #expect(head.hasPrefix("HTTP/1.1 429"), "\(head)")
        #expect(RateLimitServerTests.retryAfter(head) == 600, "\(head)")
        let post = TrioNetworkClient(websocketConfig: nodes[1].clientConfig(token: "good"))
        #expect(await thrownError { _ = try await post.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: nil, body: Data([1])) }
            as? NetworkError == .httpStatus(429))
        let metrics = nodes[1].server.metricsText()
        #expect(metrics.contains("silentshard_node_rate_limited_total{limit=\"blocked-address\"} 3"), "\(metrics)")
        #expect(metrics.contains("silentshard_node_rate_limit_store_errors_total 0"), "\(metrics)")
        for node in nodes { await node.server.stop() }
    }
}
