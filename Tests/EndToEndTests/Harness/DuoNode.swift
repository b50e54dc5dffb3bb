import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import Testing

/// Duo's node over real sockets: the libwebsockets `NodeServer` on a loopback port, its step runner and
/// its SQLite share store (the duo half of the end-to-end harness; `EndToEndFixture` is the mode-neutral
/// face).
struct DuoNode {
    let server: NodeServer
    let key: Ed25519.SigningKey
    let store: NodeShareStore

    /// The app's WebSocket base URL.
    var url: String { "ws://127.0.0.1:\(server.port)" }
    /// The key the app pins (`cloudVerifyingKey`): the node's own.
    var cloudVerifyingKey: String { Hex.encode(key.verifyingKey.bytes) }

    /// Starts a node on a fresh SQLite file (or `databasePath`, e.g. to reopen it after a restart).
    static func start(key: Ed25519.SigningKey = Ed25519.SigningKey(), databasePath: String? = nil,
                      masterKey: NodeMasterKey = .random(), verifier: any TokenVerifier = NoTokenVerifier()) throws -> DuoNode {
        let path: String
        if let databasePath {
            path = databasePath
        } else {
            let directory = NSTemporaryDirectory() + "silentshard-e2e-" + UUID().uuidString
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            path = directory + "/node.sqlite"
        }
        let store = try NodeShareStore(path: path, masterKey: masterKey)
        let runner = NodeStepRunner(nodeKey: key, store: store, replayWindow: try ReplayWindow())
        let server = NodeServer(configuration: NodeServerConfiguration(
            nodeKey: key, verifier: verifier,
            stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)),
            postHandler: NodePostHandler(runner: runner), logger: .silent))
        _ = try server.start()
        return DuoNode(server: server, key: key, store: store)
    }

    /// A backend's POST of `body` to `path` (with `?params=` when given) over loopback HTTP, with `token` as
    /// its bearer credential (duo export: the app builds the request, the operator's backend sends it).
    func post(_ body: Data, path: String, params: String? = nil, token: String?) async throws -> Data {
        let query = params.map { "?params=" + $0 } ?? ""
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)\(path)\(query)"))
        return try await WebSocketTransport.post(url: url, body: body, bearerToken: token,
                                                 settings: WebSocketSettings(WebsocketConfig(url: "ws://127.0.0.1")))
    }
}
