import CloudNode
import duo
import Foundation
import SilentShardCore
import Testing
import trio

/// Our own clients against an embedded node with the echo handler: every route, both algorithms.
@Suite(.timeLimit(.minutes(30))) struct EchoRouteTests {
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

extension EchoRouteTests {
    @Test(arguments: [false, true])
    func trioEveryRouteBothAlgorithms(secure: Bool) async throws {
        let node = try TestNode.start(secure: secure)
        let client = TrioNetworkClient(websocketConfig: node.clientConfig())
        let actions: [any NetworkAction] = [
            TrioAction.ECDSA.Keygen(), TrioAction.ECDSA.Reconcile(), TrioAction.ECDSA.KeyRefresh(), TrioAction.ECDSA.Signature(),
            TrioAction.ECDSA.PreSignature(), TrioAction.ECDSA.PreSignatureFinal(), TrioAction.ECDSA.HardDerivation(),
            TrioAction.ECDSA.Recovery(), TrioAction.ECDSA.Export(), TrioAction.ECDSA.Import(),
            TrioAction.EdDSA.Keygen(), TrioAction.EdDSA.Reconcile(), TrioAction.EdDSA.KeyRefresh(), TrioAction.EdDSA.Signature(),
            TrioAction.EdDSA.PreSignature(), TrioAction.EdDSA.PreSignatureFinal(), TrioAction.EdDSA.Recovery(),
            TrioAction.EdDSA.Export(), TrioAction.EdDSA.Import(),
        ]
        for action in actions {
            try await client.connect(action: action, params: nil)
            let payload = Data("\(action.algorithm)/\(action.action)".utf8)
            try await client.send(bytes: payload)
            #expect(try await client.read() == payload)
            try await client.disconnect()
        }
        let metrics = node.server.metricsText()
        #expect(metrics.contains(#"silentshard_node_steps_total{route="trio/trio/ecdsa/hard-derivation"} 1"#))
        #expect(metrics.contains(#"silentshard_node_steps_total{route="trio/trio/eddsa/presign-final"} 1"#))
        await node.server.stop()
    }

    @Test(arguments: [false, true])
    func duoOverTLS(secure: Bool) async throws {
        let node = try TestNode.start(secure: secure)
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.EdDSA.Keygen(), params: nil)
        try await client.send(bytes: Data([1, 2, 3]))
        #expect(try await client.read() == Data([1, 2, 3]))
        try await client.disconnect()
        await node.server.stop()
    }

    /// The handler sees the route, params and principal the server decoded.
    @Test func stepContextCarriesRouteParamsPrincipal() async throws {
        let node = try TestNode.start(verifier: try StaticTokenVerifier(token: "s3cret-token"), stepHandler: ContextReporter())
        let duo = DuoNetworkClient(websocketConfig: node.clientConfig(token: "s3cret-token"))
        let keyID = String(repeating: "ab", count: 32)
        try await duo.connect(action: DuoAction.ECDSA.Signature(), params: keyID)
        try await duo.send(bytes: Data([0]))
        #expect(String(decoding: try await duo.read(), as: UTF8.self) == "duo ecdsa duo sign \(keyID) token-file")
        try await duo.disconnect()

        let trio = TrioNetworkClient(websocketConfig: node.clientConfig(token: "s3cret-token"))
        try await trio.connect(action: TrioAction.EdDSA.Recovery(), params: "key with spaces&more=1")
        try await trio.send(bytes: Data([0]))
        #expect(String(decoding: try await trio.read(), as: UTF8.self) == "trio eddsa trio recover key with spaces&more=1 token-file")
        try await trio.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        try await trio.send(bytes: Data([0]))
        #expect(String(decoding: try await trio.read(), as: UTF8.self) == "trio ecdsa trio keygen - token-file")
        try await trio.disconnect()
        #expect(!node.log.all.contains { $0.contains("s3cret-token") })
        #expect(!node.server.metricsText().contains("s3cret-token"))
        await node.server.stop()
    }

    /// A binary first message means "no token": accepted by `none` and delivered to the handler.
    @Test func binaryFirstMessageWithoutToken() async throws {
        let node = try TestNode.start()
        let client = TrioNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: TrioAction.ECDSA.Signature(), params: nil)
        try await client.send(bytes: Data([9, 9]))
        #expect(try await client.read() == Data([9, 9]))
        try await client.disconnect()
        #expect(node.log.contains("WARNING: --auth none"))
        await node.server.stop()
    }

    @Test(arguments: [false, true])
    func eightMiBMessage(secure: Bool) async throws {
        let node = try TestNode.start(secure: secure)
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Signature(), params: nil)
        var payload = Data(count: 8 << 20)
        for index in stride(from: 0, to: payload.count, by: 4093) { payload[index] = UInt8(truncatingIfNeeded: index / 4093) }
        try await client.send(bytes: payload)
        #expect(try await client.read() == payload)
        try await client.disconnect()
        await node.server.stop()
    }
}

/// Answers each message with "mode algorithm path action params principal".
struct ContextReporter: StepHandler {
    func run(_ context: StepContext) async throws {
        while true {
            guard (try? await context.connection.read()) != nil else { return }
            let r = context.route
            let text = "\(r.mode.rawValue) \(r.algorithm.routeName) \(r.path) \(r.action) \(context.params ?? "-") \(context.principal.subject)"
            try await context.connection.send(Data(text.utf8), binary: true)
        }
    }
}
