import CloudNode
import duo
import Foundation
import SilentShardCore
import Testing
import trio

@Suite(.timeLimit(.minutes(30))) struct RejectionAndLimitTests {
    @Test func wrongSubprotocolAndUnknownRoutesAreRejected() async throws {
        let node = try TestNode.start()
        let duo = DuoNetworkClient(websocketConfig: node.clientConfig())
        let trio = TrioNetworkClient(websocketConfig: node.clientConfig())
        // Wrong or foreign subprotocol: 400.
        for action in [DuoAction.ECDSA.Keygen(protocol: "trio"), DuoAction.ECDSA.Keygen(protocol: "chat")] {
            let error = await thrownError { try await duo.connect(action: action, params: nil) }
            #expect(error as? NetworkError == .handshakeRejected(status: 400), "\(action.protocol)")
        }
        let trioWrong = await thrownError { try await trio.connect(action: TrioAction.EdDSA.Keygen(protocol: "duo-instance"), params: nil) }
        #expect(trioWrong as? NetworkError == .handshakeRejected(status: 400))
        // Unknown routes: 404.
        let unknown: [() async throws -> Void] = [
            { try await duo.connect(action: DuoAction.ECDSA.Keygen(algorithm: "rsa"), params: nil) },
            { try await duo.connect(action: DuoAction.ECDSA.Keygen(action: "launch"), params: nil) },
            { try await trio.connect(action: TrioAction.ECDSA.Keygen(path: "quartet"), params: nil) },
            { try await trio.connect(action: TrioAction.EdDSA.Keygen(action: "hard-derivation"), params: nil) },
        ]
        for attempt in unknown {
            #expect(await thrownError(attempt) as? NetworkError == .handshakeRejected(status: 404))
        }
        #expect(node.log.contains("rejected upgrade: unknown route"))
        #expect(node.log.contains("without subprotocol"))
        #expect(node.server.metricsText().contains("silentshard_node_rejected_upgrades_total 7"))
        // Still serving.
        try await duo.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await duo.send(bytes: Data([1]))
        #expect(try await duo.read() == Data([1]))
        try await duo.disconnect()
        await node.server.stop()
    }

    @Test func oversizedMessageCloses1009() async throws {
        let node = try TestNode.start(maximumMessageSize: 1 << 20)
        let client = DuoNetworkClient(websocketConfig: node.clientConfig())
        try await client.connect(action: DuoAction.ECDSA.Signature(), params: nil)
        let error = await thrownError {
            try? await client.send(bytes: Data(count: (1 << 20) + 1))
            _ = try await client.read()
        }
        #expect(closeCode(error) == 1009)
        try await client.disconnect()
        // Exactly the limit passes.
        try await client.connect(action: DuoAction.ECDSA.Signature(), params: nil)
        try await client.send(bytes: Data(count: 1 << 20))
        #expect(try await client.read().count == 1 << 20)
        try await client.disconnect()
        await node.server.stop()
    }

    @Test func maximumConnectionsRejectsWith503() async throws {
        let node = try TestNode.start(maximumConnections: 2)
        let open = try await openEchoClients(node, count: 2)
        let extra = DuoNetworkClient(websocketConfig: node.clientConfig())
        #expect(await thrownError { try await extra.connect(action: DuoAction.ECDSA.Keygen(), params: nil) } as? NetworkError
            == .handshakeRejected(status: 503))
        for client in open { try await client.disconnect() }
        // Capacity comes back once the others have gone.
        #expect(try await connectOnceAccepted(extra))
        try await extra.disconnect()
        await node.server.stop()
    }

    @Test func textAfterFirstMessageIsMalformed() async throws {
        let node = try TestNode.start()
        let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: "t"))
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        try await client.send(text: "second text")
        #expect(closeCode(await thrownError { _ = try await client.read() }) == 1002)
        try await client.disconnect()
        await node.server.stop()
    }

    @Test func idleStepTimesOut() async throws {
        let node = try TestNode.start(idleTimeout: .milliseconds(200))
        let client = DuoNetworkClient(websocketConfig: node.clientConfig(token: "t"))
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        #expect(closeCode(await thrownError { _ = try await client.read() }) == Int(NodeCloseCode.stepTimeout.rawValue))
        try await client.disconnect()
        await node.server.stop()
    }

    @Test func unservedRouteClosesWithTypedCode() async throws {
        let node = try TestNode.start(stepHandler: UnservedStepHandler())
        let client = TrioNetworkClient(websocketConfig: node.clientConfig(token: "t"))
        try await client.connect(action: TrioAction.ECDSA.Signature(), params: nil)
        let error = await thrownError { _ = try await client.read() }
        #expect(closeCode(error) == Int(NodeCloseCode.routeNotServed.rawValue))
        if case .closedByPeer(_, let reason) = error as? NetworkError { #expect(reason == "route not served by this node") }
        try await client.disconnect()
        await node.server.stop()
    }

    @Test func routeTableParsing() {
        let table = NodeRouteTable.standard
        #expect(table.route(for: "/v3/ecdsa/keygen", post: false) == NodeRoute(mode: .duo, algorithm: .ecdsa, path: "duo", action: "keygen"))
        #expect(table.route(for: "/v3/eddsa/export", post: true)?.mode == .duo)
        #expect(table.route(for: "/v3/eddsa/export", post: false) == nil)
        #expect(table.route(for: "/v3/trio/eddsa/sign", post: false) == NodeRoute(mode: .trio, algorithm: .eddsa, path: "trio", action: "sign"))
        #expect(table.route(for: "/v3/trio/presign-final", post: true)?.action == "presign-final")
        #expect(table.route(for: "/v3/trio/sign", post: true) == nil)
        for bad in ["", "/", "/v3", "/v3/", "/v2/ecdsa/keygen", "/v3/ecdsa/keygen/x", "//v3/ecdsa/keygen", "/v3/trio/ecdsa/sign",
                    "/v3/trio/eddsa/hard-derivation", "/v3/ecdsa/", "/health"] {
            #expect(table.route(for: bad, post: false) == nil, "\(bad)")
        }
    }
}
