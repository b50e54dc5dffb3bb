import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore

/// A cloud node inside the example's own process, so every example runs with no setup: a fresh
/// Ed25519 node key, a temporary SQLite share store sealed under a random master key, the duo
/// session runner and (unless `listen` is false) the WebSocket server on a free loopback port.
///
/// This is the same node `silentshard node` runs; a real app talks to a node somewhere else and only
/// needs its URL and its verifying key (`cloudVerifyingKey`), which it must get out of band.
public final class EmbeddedNode: Sendable {
    /// `ws://127.0.0.1:PORT` (nil when the node does not listen).
    public let url: String?
    /// The node's Ed25519 verifying key as 64 hex characters: the app's `cloudVerifyingKey`.
    public let cloudVerifyingKey: String
    /// The node's side of a duo step, for transports that are not WebSockets
    /// (`runner.run(connection:route:)` serves one step over any `NodeStepConnection`).
    package let runner: NodeStepRunner
    private let server: NodeServer?
    private let directory: String

    /// Starts the node. `listen: false` skips the WebSocket server (the in-process transport needs
    /// only the runner).
    public init(listen: Bool = true) throws {
        let nodeKey = Ed25519.SigningKey()
        directory = NSTemporaryDirectory() + "silentshard-example-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let store = try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random())
        runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow())
        cloudVerifyingKey = Hex.encode(nodeKey.verifyingKey.bytes)
        if listen {
            let server = NodeServer(configuration: NodeServerConfiguration(
                nodeKey: nodeKey, verifier: NoTokenVerifier(),
                stepHandlers: StepHandlerRegistry(fallback: NodeStepHandler(runner: runner)), logger: .silent))
            let port = try server.start()
            self.server = server
            url = "ws://127.0.0.1:\(port)"
        } else {
            server = nil
            url = nil
        }
    }

    /// Stops the server and deletes the temporary share store.
    public func stop() async {
        await server?.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }
}
