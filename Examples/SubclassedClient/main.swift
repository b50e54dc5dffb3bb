// Example 2 of the seed "Custom WebSocket client": subclass `DuoNetworkClient`.
//
// Keep the SDK's WebSocket transport (framing, /v3/{algorithm}/{action} routing, the `duo-instance`
// subprotocol, the token message, the session lifecycle) and hook `connect` / `send` / `read` /
// `disconnect`: here to log every step (sizes only — protocol messages are never logged), to add a
// header to each upgrade request and to rewrite a route, as the seed shows. Pass the subclass to the
// `networkClient:` overload.
//
//   swift run example-subclassed-client                                  # starts its own node
//   swift run example-subclassed-client --node ws://127.0.0.1:8080 --cloud-key <64 hex>
import ExampleSupport
import Foundation
import duo

/// Logs each connect / send / read / disconnect, adds a header and rewrites the keygen route, then
/// calls `super`.
///
/// One client runs one step at a time (the session drives it sequentially). In an app built with
/// MainActor default isolation, declare it `nonisolated class`.
final class LoggingNetworkClient: DuoNetworkClient {
    private let label: String

    init(label: String, websocketConfig: WebsocketConfig) {
        self.label = label
        super.init(websocketConfig: websocketConfig)
    }

    override func connect(websocketAction: DuoNetworkAction, params: String?) async throws {
        // Route rewriting, as in the seed: keygen gets its own action value (here a new `path`), every
        // other step passes unchanged. `path` only feeds the HTTP POST URL, so the WebSocket route stays
        // /v3/{algorithm}/keygen; change `algorithm` / `action` / `protocol` only to match your own
        // server, since they form the WebSocket route and subprotocol.
        let routed: DuoNetworkAction
        switch websocketAction {
        case is DuoAction.ECDSA.Keygen:
            routed = DuoAction.ECDSA.Keygen(path: "custom-path-for-keygen")
        case is DuoAction.EdDSA.Keygen:
            routed = DuoAction.EdDSA.Keygen(path: "custom-path-for-keygen")
        default:
            routed = websocketAction
        }
        // Headers on the HTTP upgrade request (HTTP tokens and printable values only; the client's own
        // fields such as Host or Sec-WebSocket-* cannot be replaced). Keep credentials in
        // `WebsocketConfig.authenticationToken`, which travels as the first message.
        let headers = ["X-Client-Label": label]
        // `params` is a key id (not secret) — still, log only whether there is one.
        log("connect /v3/\(routed.algorithm)/\(routed.action) subprotocol \(routed.protocol)"
            + (params == nil ? "" : " with params") + (routed.path != websocketAction.path ? " (path rewritten)" : "")
            + ", header X-Client-Label")
        try await super.connect(websocketAction: routed, params: params, headers: headers)
    }

    override func send(bytes: Data) async throws {
        log("send \(bytes.count) bytes")
        try await super.send(bytes: bytes)
    }

    override func read() async throws -> Data {
        let data = try await super.read()
        log("read \(data.count) bytes")
        return data
    }

    override func disconnect() async throws {
        log("disconnect")
        try await super.disconnect()
    }

    private func log(_ line: String) {
        print("   [\(label)] \(line)")
    }
}

let status = await ExampleRun.main("DuoNetworkClient subclass") { target in
    guard let url = target.url else { return false }
    let websocketConfig = WebsocketConfig(url: url)
    let messageSigner = SoftwareEd25519MessageSigner()
    let storageClient = InMemoryStorageClient()

    // The seed's second overload: your `DuoNetworkClient` (or subclass), stock routing.
    let ecdsa = SilentShard.ECDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: target.cloudVerifyingKey,
        networkClient: LoggingNetworkClient(label: "ecdsa", websocketConfig: websocketConfig),
        storageClient: storageClient
    )
    let eddsa = SilentShard.EdDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: target.cloudVerifyingKey,
        networkClient: LoggingNetworkClient(label: "eddsa", websocketConfig: websocketConfig),
        storageClient: storageClient
    )

    let ecdsaVerified = try await ExampleRun.keygenSignVerify(ecdsa)
    let eddsaVerified = try await ExampleRun.keygenSignVerify(eddsa)
    return ecdsaVerified && eddsaVerified
}
exit(status)
