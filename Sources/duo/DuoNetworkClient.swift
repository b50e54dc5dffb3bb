/// The default duo transport: a WebSocket per protocol step at `/v3/{algorithm}/{action}`, with
/// the step's subprotocol (`duo-instance`) and the authentication token as the first message.
/// Duo flows never use HTTP POST; `sendPostRequest` still works for servers that offer it, routed
/// like trio's: `/v3/{path}/{action}`, EdDSA `/v3/{path}/eddsa/{action}`.
///
/// On `connect` it opens the socket (`params` as the `params` query item), offers the action's
/// `protocol` and fails with ``NetworkError/subprotocolMismatch(offered:selected:)`` unless the
/// server selects it, then sends `WebsocketConfig.authenticationToken` as a text message when set.
/// `disconnect()` closes cleanly and releases every transport resource; the client is reusable.
///
/// Subclass it to hook `connect(websocketAction:params:)` / `send` / `read` (logging, headers,
/// retry, route rewriting) and call `super`. Use one client for one step at a time.
///
/// - Important: In app code built with MainActor default isolation, mark your subclass
///   `nonisolated` (`nonisolated class MyClient: DuoNetworkClient`); its members would otherwise
///   be MainActor-isolated and could not override these nonisolated methods.
open class DuoNetworkClient: NetworkClient {
    /// The configuration this client was created with.
    public let websocketConfig: WebsocketConfig
    let engine: WebSocketClientEngine

    /// Creates an idle client; nothing is opened until `connect`.
    public init(websocketConfig: WebsocketConfig) {
        self.websocketConfig = websocketConfig
        self.engine = WebSocketClientEngine(config: websocketConfig)
    }

    /// Opens the WebSocket for one step (closing a previous one first).
    nonisolated(nonsending) open func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        try await connect(websocketAction: websocketAction, params: params, headers: [:])
    }

    /// Opens the WebSocket for one step like `connect(websocketAction:params:)`, adding `headers` to
    /// the HTTP upgrade request. For subclasses: override `connect(websocketAction:params:)` and call
    /// this on `super` to inject headers. Names must be HTTP tokens and values visible ASCII (no CR/LF);
    /// the fields the client sets itself (`Host`, `Upgrade`, `Connection`, `Sec-WebSocket-*`,
    /// `User-Agent`) cannot be replaced. A bad field throws ``NetworkError/invalidHandshake(reason:)``
    /// before anything is sent. Headers are never logged by the SDK, but they are not secret-typed:
    /// keep credentials in `WebsocketConfig.authenticationToken`.
    nonisolated(nonsending) public func connect(websocketAction: DuoNetworkAction, params: String?,
                                                headers: [String: String]) async throws {
        let url = try NetworkRoute.url(base: websocketConfig.url, segments: [websocketAction.algorithm, websocketAction.action],
                                       params: params, websocket: true)
        try await engine.connect(url: url, subprotocol: websocketAction.protocol, headers: headers)
    }

    /// ``NetworkClient`` entry point: calls (the possibly overridden) `connect(websocketAction:params:)`.
    nonisolated(nonsending) public func connect(action: NetworkAction, params: String?) async throws {
        let duoAction = action as? DuoNetworkAction ?? DuoRoutedAction(action)
        try await connect(websocketAction: duoAction, params: params)
    }

    /// Sends one binary message.
    nonisolated(nonsending) open func send(bytes: Data) async throws {
        try await engine.send(.binary(bytes))
    }

    /// Sends one text message.
    nonisolated(nonsending) open func send(text: String) async throws {
        try await engine.send(.text(text))
    }

    /// Suspends until the next message (at most `readTimeout`) and returns its bytes.
    nonisolated(nonsending) open func read() async throws -> Data {
        try await engine.read()
    }

    /// Closes the WebSocket (code 1000) and releases its resources; a no-op when idle.
    nonisolated(nonsending) open func disconnect() async throws {
        await engine.disconnect()
    }

    /// POSTs `body` to the action's route over `https` (`http` for `ws`) with the token as
    /// `Authorization: Bearer …`, and returns the response body. Non-2xx statuses throw
    /// ``NetworkError/httpStatus(_:)``.
    nonisolated(nonsending) open func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        let duoAction = action as? DuoNetworkAction ?? DuoRoutedAction(action)
        let url = try NetworkRoute.url(base: websocketConfig.url, segments: duoAction.postRouteSegments,
                                       params: params, websocket: false)
        return try await engine.post(url: url, body: body)
    }
}

extension DuoNetworkClient: TokenRefreshingClient {
    package var canRefreshToken: Bool { engine.canRefreshToken }
    package func tokenWasRefused() { engine.tokenWasRefused() }
}

extension DuoNetworkClient: StepTimeoutConfigurable {
    /// `websocketConfig.stepTimeout`.
    public var stepTimeout: Duration? { websocketConfig.stepTimeout }
}
