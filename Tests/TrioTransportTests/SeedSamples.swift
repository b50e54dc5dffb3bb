// The code samples of the trio seed (shared/seeds/000_e101bd969f60e797.txt), compiled unchanged.
//
// Adapted: the three `let trioSession = SilentShard.ECDSA.trioInitiator(...)` statements are each
// wrapped in a function (they are top-level statements of separate files in the seed, and would
// collide as globals of one file); `messageSigner`, `cloudPublicKey` and `storageClient`, which the
// seed leaves to the app, are declared in SeedContext.swift. The seed's Example.swift and
// CustomNetworkClient.swift are one file here, so `websocketConfig` is declared once.
import trio

// MARK: Example.swift (1. Default WebSocket)

// The default transport. Pass a WebsocketConfig and the SDK builds and owns the
// default TrioNetworkClient (a URLSession WebSocket client) for you — nothing to implement.
let websocketConfig = WebsocketConfig(url: "wss://your-server.example.com")

func seedExample1() -> TrioSession {  // ADAPTED: wrapped in a function
let trioSession = SilentShard.ECDSA.trioInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    websocketConfig: websocketConfig,
    storageClient: storageClient
)
return trioSession
}

// MARK: CustomNetworkClient.swift (2. Subclass TrioNetworkClient)

// Subclass the default client to hook connect / send / read while reusing its framing
// and /v3/{path}/{action} routing. Here we rewrite the keygen route as an example
// and delegate every other action unchanged; you could just as easily log, add headers,
// or wrap the call in retry/back-off before calling super.
class CustomNetworkClient: TrioNetworkClient {

    override func connect(websocketAction: TrioNetworkAction, params: String?) async throws {
        let routed: TrioNetworkAction
        switch websocketAction {
        case is TrioAction.ECDSA.Keygen:
            routed = TrioAction.ECDSA.Keygen(path: "custom-path-for-keygen")
        default:
            routed = websocketAction
        }
        try await super.connect(websocketAction: routed, params: params)
    }
}

func seedExample2() -> TrioSession {  // ADAPTED: wrapped in a function
let trioSession = SilentShard.ECDSA.trioInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    networkClient: CustomNetworkClient(websocketConfig: websocketConfig),
    storageClient: storageClient
)
return trioSession
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
    // sendPostRequest has a default that throws .postRequestUnsupported; implement it only
    // if your transport supports pre-signatures (trio runs preSignFinal over HTTP POST).
}

// MARK: CustomActions.swift (3b. Implement TrioNetworkActionProvider)

// How each step is addressed. Every TrioAction.ECDSA.* initializer takes
// path / action / protocol / algorithm — override whichever fields you want: pass one,
// spell them all out, or take the defaults, per step.
struct CustomActions: TrioNetworkActionProvider {
    // Override a single field (here, the route's `path`).
    let keygen: NetworkAction = TrioAction.ECDSA.Keygen(path: "my-keygen-route")

    // Spell out every field explicitly.
    let reconcile: NetworkAction = TrioAction.ECDSA.Reconcile(
        path: "trio", action: "reconcile", protocol: "-no-reconcile", algorithm: "ecdsa"
    )

    // Override the WebSocket subprotocol negotiated on connect.
    let refresh: NetworkAction = TrioAction.ECDSA.KeyRefresh(protocol: "my-trio-subprotocol")

    // Override the `action` segment of the route.
    let sign: NetworkAction = TrioAction.ECDSA.Signature(action: "signature")

    // Pre-signatures: preSign runs over the WebSocket, preSignFinal over HTTP POST.
    let preSign: NetworkAction = TrioAction.ECDSA.PreSignature()
    let preSignFinal: NetworkAction = TrioAction.ECDSA.PreSignatureFinal()

    // hardDerivation is ECDSA-only.
    let hardDerivation: NetworkAction = TrioAction.ECDSA.HardDerivation()

    // …or just take the stock routing.
    let recover: NetworkAction = TrioAction.ECDSA.Recovery()
    let export: NetworkAction = TrioAction.ECDSA.Export()
    let `import`: NetworkAction = TrioAction.ECDSA.Import()
}

// MARK: Example.swift (3c. Wire the two halves)

func seedExample3() -> TrioSession {  // ADAPTED: wrapped in a function
let trioSession = SilentShard.ECDSA.trioInitiator(
    messageSigner: messageSigner,
    cloudVerifyingKey: cloudPublicKey,
    storageClient: storageClient,
    networkClient: CustomTransport(),
    actionProvider: CustomActions() // or .ecdsa
)
return trioSession
}

/// The transport objects the three `trioInitiator` calls receive, with the provider arguments typed
/// as the initiator's `some TrioNetworkActionProvider`.
func seedTransports() -> [(NetworkClient, any TrioNetworkActionProvider)] {
    func custom(_ networkClient: NetworkClient, actionProvider: some TrioNetworkActionProvider) -> (NetworkClient, any TrioNetworkActionProvider) {
        (networkClient, actionProvider)
    }
    return [
        (TrioNetworkClient(websocketConfig: websocketConfig), .ecdsa),
        (CustomNetworkClient(websocketConfig: websocketConfig), .ecdsa),
        custom(CustomTransport(), actionProvider: CustomActions()),
        custom(CustomTransport(), actionProvider: .ecdsa),
        custom(CustomTransport(), actionProvider: .eddsa),
    ]
}
