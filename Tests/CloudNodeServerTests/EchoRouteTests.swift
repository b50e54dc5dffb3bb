import CloudNode
import duo
import Foundation
import SilentShardCore
import Testing
import trio

/// Our own clients against an embedded node with the echo handler: every route, both algorithms.
@Suite struct EchoRouteTests {
    @Test func duoEveryRouteBothAlgorithms() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        let actions: [any NetworkAction] = [
            DuoAction.ECDSA.Keygen(), DuoAction.ECDSA.Reconcile(), DuoAction.ECDSA.KeyRefresh(), DuoAction.ECDSA.Signature(),
            DuoAction.ECDSA.Import(), DuoAction.EdDSA.Keygen(), DuoAction.EdDSA.Reconcile(), DuoAction.EdDSA.KeyRefresh(),
            DuoAction.EdDSA.Signature(), DuoAction.EdDSA.Import(),
        ]
        for action in actions {
            try await client.connect(action: action, params: "00ff")
            let payload = Data("\(action.algorithm)/\(action.action)".utf8)
            try await client.send(bytes: payload)
            #expect(try await client.read() == payload)
            try await client.disconnect()
        }
        let metrics = node.server.metricsText()
        #expect(metrics.contains(#"silentshard_node_steps_total{route="duo/ecdsa/keygen"} 1"#))
        #expect(metrics.contains(#"silentshard_node_steps_total{route="duo/eddsa/import"} 1"#))
        await node.server.stop()
    }
}
