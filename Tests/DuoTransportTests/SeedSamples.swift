// The code samples of the duo seed (shared/seeds/001_c836ce62aefbaadf.txt), compiled unchanged.
//
// Adapted: the three `let duoSession = SilentShard.ECDSA.duoInitiator(...)` statements are each
// wrapped in a function (they are top-level statements of separate files in the seed, and would
// collide as globals of one file); `messageSigner`, `cloudPublicKey` and `storageClient`, which the
// seed leaves to the app, are declared in SeedContext.swift. The seed's Example.swift and
// CustomNetworkClient.swift are one file here, so `websocketConfig` is declared once.
import duo

// MARK: Example.swift (1. Default WebSocket)

// The default transport. Pass a WebsocketConfig and the SDK builds and owns the
// default DuoNetworkClient (a URLSession WebSocket client) for you — nothing to implement.
let websocketConfig = WebsocketConfig(url: "wss://your-server.example.com")

func seedExample1() -> DuoSession {  // ADAPTED: wrapped in a function
let duoSession = SilentShard.ECDSA.duoInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    websocketConfig: websocketConfig,
    storageClient: storageClient
)
return duoSession
}

// MARK: CustomNetworkClient.swift (2. Subclass DuoNetworkClient)

// Subclass the default client to hook connect / send / read while reusing its framing
// and /v3/{algorithm}/{action} routing. Here we rewrite the keygen route as an example
// and delegate every other action unchanged; you could just as easily log, add headers,
// or wrap the call in retry/back-off before calling super.
class CustomNetworkClient: DuoNetworkClient {

    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        let routed: DuoNetworkAction
        switch websocketAction {
        case is DuoAction.ECDSA.Keygen:
            routed = DuoAction.ECDSA.Keygen(path: "custom-path-for-keygen")
        default:
            routed = websocketAction
        }
        try await super.connect(websocketAction: routed, params: params)
    }
}

func seedExample2() -> DuoSession {  // ADAPTED: wrapped in a function
let duoSession = SilentShard.ECDSA.duoInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    networkClient: CustomNetworkClient(websocketConfig: websocketConfig),
    storageClient: storageClient
)
return duoSession
}

// MARK: CustomTransport.swift (3a. Implement NetworkClient)

// How bytes move. The SDK drives your client with the same rhythm for every step:
// connect → send/read → disconnect. `action` is the concrete step your routing selected.
class CustomTransport: NetworkClient {
    func connect(action: NetworkAction, params: String?) async throws {
        // `action` is the step the provider chose; `params` may carry a keyId.
        // Open a channel for it over your transport (WebSocket, app socket, BLE, …).
    }

    func send(bytes: Data) async throws { /* send framed bytes to the peer */ }
    func send(text: String) async throws { /* send framed text to the peer */ }
    func read() async throws -> Data { Data() /* suspend until the next peer message, then return its bytes */ }
    func disconnect() async throws { /* close the channel; stay reusable for the next connect */ }
    // sendPostRequest has a default that throws .postRequestUnsupported; duo never needs it.
}

// MARK: CustomActions.swift (3b. Implement DuoNetworkActionProvider)

// How each step is addressed. Every DuoAction.ECDSA.* initializer takes
// path / action / protocol / algorithm — override whichever fields you want: pass one,
// spell them all out, or take the defaults, per step.
struct CustomActions: DuoNetworkActionProvider {
    // Override a single field (here, the route's `path`).
    let keygen: NetworkAction = DuoAction.ECDSA.Keygen(path: "my-keygen-route")

    // Spell out every field explicitly.
    let reconcile: NetworkAction = DuoAction.ECDSA.Reconcile(
        path: "duo", action: "reconcile", protocol: "duo-instance", algorithm: "ecdsa"
    )

    // Override the WebSocket subprotocol negotiated on connect.
    let refresh: NetworkAction = DuoAction.ECDSA.KeyRefresh(protocol: "my-duo-instance")

    // Override the `action` segment of the /v3/{algorithm}/{action} route.
    let sign: NetworkAction = DuoAction.ECDSA.Signature(action: "signature")

    // …or just take the stock routing.
    let `import`: NetworkAction = DuoAction.ECDSA.Import()
}

// MARK: Example.swift (3c. Wire the two halves)

func seedExample3() -> DuoSession {  // ADAPTED: wrapped in a function
let duoSession = SilentShard.ECDSA.duoInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    storageClient: storageClient,
    networkClient: CustomTransport(),
    actionProvider: CustomActions() // or .ecdsa
)
return duoSession
}

/// Stand-in for the three adapted `duoInitiator` calls: the transport objects they receive,
/// with the provider arguments typed as the initiator's `some DuoNetworkActionProvider`.
func seedTransports() -> [(NetworkClient, any DuoNetworkActionProvider)] {
    func custom(_ networkClient: NetworkClient, actionProvider: some DuoNetworkActionProvider) -> (NetworkClient, any DuoNetworkActionProvider) {
        (networkClient, actionProvider)
    }
    return [
        (DuoNetworkClient(websocketConfig: websocketConfig), .ecdsa),
        (CustomNetworkClient(websocketConfig: websocketConfig), .ecdsa),
        custom(CustomTransport(), actionProvider: CustomActions()),
        custom(CustomTransport(), actionProvider: .ecdsa),
        custom(CustomTransport(), actionProvider: .eddsa),
    ]
}
