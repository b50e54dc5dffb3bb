import SilentShardTestSupport
import Testing
import duo

struct PeerHello: Decodable, Equatable {
    var path: String
    var query: String
    var offered: [String]
    var selected: String?
    /// The X-* fields of the upgrade request (absent when there are none).
    var headers: [String: String]? = nil
}

func providerActions(_ provider: some DuoNetworkActionProvider) -> [(String, NetworkAction)] {
    [("keygen", provider.keygen), ("reconcile", provider.reconcile), ("refresh", provider.refresh),
     ("sign", provider.sign), ("import", provider.import)]
}

@Suite("Duo actions, providers and routes", .timeLimit(.minutes(30)))
struct DuoRoutingTests {
    @Test func defaultActionStrings() {
        for (algorithm, actions) in [("ecdsa", providerActions(.ecdsa)), ("eddsa", providerActions(.eddsa))] {
            for (expected, action) in actions {
                #expect(action.action == expected)
                #expect(action.path == "duo")
                #expect(action.protocol == "duo-instance")
                #expect(action.algorithm == algorithm)
                #expect(action is DuoNetworkAction)
            }
        }
        #expect(DuoAction.EdDSA.KeyRefresh() == DuoAction.EdDSA.KeyRefresh(path: "duo", action: "refresh", protocol: "duo-instance", algorithm: "eddsa"))
    }

    @Test(arguments: ["ecdsa", "eddsa"])
    func everyRouteReachesThePeer(algorithm: String) async throws {
        let peer = try await PythonPeer.shared()
        for secure in [false, true] {
            let config = WebsocketConfig(url: secure ? peer.wss : peer.ws, authenticationToken: "duo-token",
                                         trustedRootCertificates: [peer.caCertificate])
            let client = DuoNetworkClient(websocketConfig: config)
            let actions = algorithm == "ecdsa" ? providerActions(.ecdsa) : providerActions(.eddsa)
            for (name, action) in actions {
                try await client.connect(action: action, params: "beef")
                let hello = try JSONDecoder().decode(PeerHello.self, from: try await client.read())
                #expect(hello == PeerHello(path: "/v3/\(algorithm)/\(name)", query: "params=beef",
                                           offered: ["duo-instance"], selected: "duo-instance"))
                #expect(try await client.read() == Data("duo-token".utf8))
                try await client.send(text: "t")
                #expect(try await client.read() == Data("t".utf8))
                try await client.disconnect()
            }
        }
    }

    @Test func subclassRewritesTheKeygenRoute() async throws {
        let peer = try await PythonPeer.shared()
        let client: NetworkClient = CustomNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws))
        try await client.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        // Duo routes by algorithm: the rewritten `path` only feeds POST URLs.
        #expect(try JSONDecoder().decode(PeerHello.self, from: try await client.read()).path == "/v3/ecdsa/keygen")
        try await client.disconnect()
    }

    @Test func subclassInjectsHeaders() async throws {
        let peer = try await PythonPeer.shared()
        final class HeaderClient: DuoNetworkClient {
            override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
                try await super.connect(websocketAction: websocketAction, params: params,
                                        headers: ["X-App-Version": "1.2.3", "X-Request-Id": "step-\(websocketAction.action)"])
            }
        }
        for secure in [false, true] {
            let client: NetworkClient = HeaderClient(websocketConfig: WebsocketConfig(
                url: secure ? peer.wss : peer.ws, authenticationToken: "tok", trustedRootCertificates: [peer.caCertificate]))
            try await client.connect(action: DuoAction.EdDSA.Signature(), params: "ab")
            let hello = try JSONDecoder().decode(PeerHello.self, from: try await client.read())
            #expect(hello == PeerHello(path: "/v3/eddsa/sign", query: "params=ab", offered: ["duo-instance"],
                                       selected: "duo-instance",
                                       headers: ["x-app-version": "1.2.3", "x-request-id": "step-sign"]))
            #expect(try await client.read() == Data("tok".utf8))
            try await client.disconnect()
        }
        // Without extra fields nothing is added.
        let plain = DuoNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws))
        try await plain.connect(action: DuoAction.ECDSA.Keygen(), params: nil)
        #expect(try JSONDecoder().decode(PeerHello.self, from: try await plain.read()).headers == nil)
        try await plain.disconnect()
    }

    @Test func badHeadersAreRefusedBeforeAnythingIsSent() async throws {
        let client = DuoNetworkClient(websocketConfig: WebsocketConfig(url: "ws://127.0.0.1:1"))
        for (headers, name) in [(["X-A": "v\r\nX-Injected: 1"], "X-A"), (["Host": "evil"], "Host"),
                                (["sec-websocket-key": "x"], "sec-websocket-key"), (["Bad Name": "v"], "(not a token)"),
                                (["X-B": " padded"], "X-B"), (["X-C": "caf\u{E9}"], "X-C")] {
            // Port 1 is closed: a connection attempt would fail with connectionRefused instead.
            await #expect(throws: NetworkError.invalidHandshake(reason: "header \(name) not allowed")) {
                try await client.connect(websocketAction: DuoAction.ECDSA.Keygen(), params: nil, headers: headers)
            }
        }
    }

    @Test func customProviderOverInMemoryPipe() async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        let provider = CustomActions()
        let echo = Task {
            try await node.connect(action: provider.refresh, params: nil)
            try await node.send(bytes: try await node.read())
            try await node.disconnect()
        }
        try await app.connect(action: provider.refresh, params: "k")
        try await app.send(bytes: Data([1, 2, 3]))
        #expect(try await app.read() == Data([1, 2, 3]))
        try await app.disconnect()
        try await echo.value
        #expect(app.connections.first?.action.protocol == "my-duo-instance")
        await #expect(throws: NetworkError.postRequestUnsupported) {
            _ = try await CustomTransport().sendPostRequest(action: provider.sign, params: nil, body: Data())
        }
        #expect(seedTransports().count == 5)
    }
}

@Suite("Duo seed initiators", .timeLimit(.minutes(30)))
struct DuoSeedInitiatorTests {
    @Test func theThreeOverloadsBuildSessions() {
        #expect([seedExample1(), seedExample2(), seedExample3()].allSatisfy { $0.algorithm == .ecdsa })
        let eddsa = SilentShard.EdDSA.duoInitiator(messageSigner: messageSigner, cloudVerifyingKey: cloudPublicKey,
                                                   websocketConfig: websocketConfig, storageClient: storageClient)
        #expect(eddsa.algorithm == .eddsa)
    }
}
