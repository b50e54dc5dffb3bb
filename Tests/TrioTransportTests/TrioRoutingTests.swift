import SilentShardTestSupport
import Testing
import trio

/// What the Python peer saw of the opening handshake (its first message).
struct PeerHello: Decodable, Equatable {
    var path: String
    var query: String
    var offered: [String]
    var selected: String?
}

func providerActions(_ provider: some TrioNetworkActionProvider) -> [(String, NetworkAction)] {
    [("keygen", provider.keygen), ("reconcile", provider.reconcile), ("refresh", provider.refresh),
     ("hard-derivation", provider.hardDerivation), ("sign", provider.sign), ("presign", provider.preSign),
     ("presign-final", provider.preSignFinal), ("recover", provider.recover), ("export", provider.export),
     ("import", provider.import)]
}

@Suite("Trio actions, providers and routes", .timeLimit(.minutes(30)))
struct TrioRoutingTests {
    @Test func defaultActionStrings() {
        for (expected, action) in providerActions(.ecdsa) {
            #expect(action.action == expected)
            #expect(action.path == "trio")
            #expect(action.protocol == "trio")
            #expect(action.algorithm == "ecdsa")
            #expect(action is TrioNetworkAction)
        }
        for (expected, action) in providerActions(.eddsa) where expected != "hard-derivation" {
            #expect(action.action == expected)
            #expect(action.path == "trio")
            #expect(action.protocol == "trio")
            #expect(action.algorithm == "eddsa")
        }
        // EdDSA has no hard derivation: the provider default is the (never used) ECDSA action.
        #expect(TrioEdDSANetworkActions().hardDerivation is TrioAction.ECDSA.HardDerivation)
        #expect(TrioAction.ECDSA.Keygen() == TrioAction.ECDSA.Keygen(path: "trio", action: "keygen", protocol: "trio", algorithm: "ecdsa"))
        #expect(TrioAction.EdDSA.PreSignatureFinal().action == "presign-final")
    }

    @Test(arguments: [false, true])
    func everyRouteReachesThePeer(eddsa: Bool) async throws {
        let peer = try await PythonPeer.shared()
        let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws, authenticationToken: "t0k"))
        let actions = eddsa ? providerActions(.eddsa).filter { $0.0 != "hard-derivation" } : providerActions(.ecdsa)
        for (name, action) in actions {
            try await client.connect(action: action, params: "00ab")
            let hello = try JSONDecoder().decode(PeerHello.self, from: try await client.read())
            #expect(hello == PeerHello(path: eddsa ? "/v3/trio/eddsa/\(name)" : "/v3/trio/\(name)", query: "params=00ab",
                                       offered: ["trio"], selected: "trio"))
            #expect(try await client.read() == Data("t0k".utf8))  // the token came first, as text
            try await client.send(bytes: Data([7]))
            #expect(try await client.read() == Data([7]))
            try await client.disconnect()
        }
    }

    @Test func subclassRewritesTheKeygenRoute() async throws {
        let peer = try await PythonPeer.shared()
        let client = CustomNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws))
        // Through the NetworkClient entry point, as a session would call it.
        let asProtocol: NetworkClient = client
        try await asProtocol.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        var hello = try JSONDecoder().decode(PeerHello.self, from: try await client.read())
        #expect(hello.path == "/v3/custom-path-for-keygen/keygen")
        #expect(hello.query == "")
        try await client.disconnect()
        try await asProtocol.connect(action: TrioAction.ECDSA.Signature(), params: nil)
        hello = try JSONDecoder().decode(PeerHello.self, from: try await client.read())
        #expect(hello.path == "/v3/trio/sign")
        try await asProtocol.disconnect()
    }

    @Test func customProviderRoutesAndSubprotocols() async throws {
        let peer = try await PythonPeer.shared()
        let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: peer.ws))
        let actions = CustomActions()
        try await client.connect(action: actions.keygen, params: nil)
        #expect(try JSONDecoder().decode(PeerHello.self, from: try await client.read()).path == "/v3/my-keygen-route/keygen")
        try await client.connect(action: actions.refresh, params: nil)  // reconnect without disconnect closes the old one
        #expect(try JSONDecoder().decode(PeerHello.self, from: try await client.read()).selected == "my-trio-subprotocol")
        try await client.connect(action: actions.sign, params: nil)
        #expect(try JSONDecoder().decode(PeerHello.self, from: try await client.read()).path == "/v3/trio/signature")
        try await client.disconnect()
    }

    @Test func postRequestToTheSameRouteWithBearer() async throws {
        struct Info: Decodable { var path: String; var query: String; var authorization: String? }
        let peer = try await PythonPeer.shared()
        for eddsa in [false, true] {
            let client = TrioNetworkClient(websocketConfig: WebsocketConfig(url: peer.http, authenticationToken: "bearer-secret"))
            let provider: any TrioNetworkActionProvider = eddsa ? TrioEdDSANetworkActions() : TrioECDSANetworkActions()
            let body = try await client.sendPostRequest(action: provider.preSignFinal, params: "info", body: Data([1, 2]))
            let info = try JSONDecoder().decode(Info.self, from: body)
            #expect(info.path == (eddsa ? "/v3/trio/eddsa/presign-final" : "/v3/trio/presign-final"))
            #expect(info.authorization == "Bearer bearer-secret")
        }
    }

    @Test func customTransportDefaultsPostToUnsupported() async throws {
        let transport: NetworkClient = CustomTransport()
        await #expect(throws: NetworkError.postRequestUnsupported) {
            _ = try await transport.sendPostRequest(action: TrioAction.ECDSA.PreSignatureFinal(), params: nil, body: Data())
        }
        #expect(seedTransports().count == 5)
        // The seed's three trioInitiator calls build ECDSA sessions.
        #expect([seedExample1(), seedExample2(), seedExample3()].allSatisfy { $0.algorithm == .ecdsa })
    }
}
