import CloudNode
import duo
import Foundation
import SilentShardCore
import Testing
import trio

@Suite(.timeLimit(.minutes(30))) struct HTTPEndpointTests {
    @Test func healthMetricsVerifyingKeyAndUnknown() async throws {
        let node = try TestNode.start()
        let (healthStatus, health) = try await node.get("/health")
        #expect(healthStatus == 200)
        #expect(String(decoding: health, as: UTF8.self) == "ok")

        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1, 2, 3, 4]))
        _ = try await client.read()
        try await client.disconnect()

        let (metricsStatus, metricsBody) = try await node.get("/metrics")
        #expect(metricsStatus == 200)
        let metrics = String(decoding: metricsBody, as: UTF8.self)
        for name in ["silentshard_node_connections_open", "silentshard_node_connections_total 1",
                     "silentshard_node_messages_received_total 1", "silentshard_node_bytes_received_total 4",
                     "silentshard_node_messages_sent_total 1", "silentshard_node_rejected_upgrades_total 0",
                     "silentshard_node_auth_failures_total 0", #"silentshard_node_steps_total{route="duo/ecdsa/keygen"} 1"#,
                     "# TYPE silentshard_node_connections_total counter"] {
            #expect(metrics.contains(name), "\(name)")
        }

        let (keyStatus, keyBody) = try await node.get("/v3/verifying-key")
        #expect(keyStatus == 200)
        let json = try JSONSerialization.jsonObject(with: keyBody) as? [String: Any]
        #expect(json?["verifying_key"] as? String == node.server.verifyingKeyHex)
        #expect(node.server.verifyingKeyHex.count == 64)
        #expect(json?["node_key"] as? String == node.server.verifyingKeyHex)
        #expect(json?["certificate"] is NSNull)

        #expect(try await node.get("/nope").0 == 404)
        #expect(try await node.get("/v3/ecdsa/keygen").0 == 404, "a plain GET on a step route is not an upgrade")
        await node.server.stop()
    }

    @Test(arguments: [false, true])
    func postEchoAuthAndSizeLimit(secure: Bool) async throws {
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "post-token"), secure: secure,
                                      maximumPostBodySize: 256 << 10)
        let good = TrioNetworkClient(websocketConfig: node.clientConfig(token: "post-token"))
        let body = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        #expect(try await good.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: "aa", body: body) == body)
        #expect(try await good.sendPostRequest(action: TrioAction.EdDSA.PreSignatureFinal(), params: nil, body: Data([1])) == Data([1]))
        // Duo export (the app backend's POST).
        let url = try #require(URL(string: "\(node.httpURL)/v3/eddsa/export"))
        let settings = WebSocketSettings(node.clientConfig())
        #expect(try await WebSocketTransport.post(url: url, body: Data([5]), bearerToken: "post-token", settings: settings) == Data([5]))
        // Too large: 413.
        let tooLarge = await thrownError {
            _ = try await good.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: nil, body: Data(count: (256 << 10) + 1))
        }
        #expect(tooLarge as? NetworkError == .httpStatus(413))
        // Wrong token: 401; no token: 401.
        let bad = TrioNetworkClient(websocketConfig: node.clientConfig(token: "nope"))
        #expect(await thrownError { _ = try await bad.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: nil, body: body) }
            as? NetworkError == .httpStatus(401))
        #expect(await thrownError { _ = try await WebSocketTransport.post(url: url, body: Data([5]), bearerToken: nil, settings: settings) }
            as? NetworkError == .httpStatus(401))
        // POST to a route that is not a POST route: 404.
        let signURL = try #require(URL(string: "\(node.httpURL)/v3/trio/sign"))
        #expect(await thrownError { _ = try await WebSocketTransport.post(url: signURL, body: Data([5]), bearerToken: "post-token", settings: settings) }
            as? NetworkError == .httpStatus(404))
        #expect(node.server.metricsText().contains("silentshard_node_auth_failures_total 2"))
        await node.server.stop()
    }
}
