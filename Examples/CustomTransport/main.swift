// Example 3 of the seed "Custom WebSocket client": bring your own transport.
//
// No sockets at all: the app and the node exchange messages over an in-process `MessagePipe`, the
// stand-in for a Bluetooth LE link (connect = open a GATT connection, send = characteristic write,
// read = next notification). Two halves on the app side, as the seed says:
//   a. the transport, a `NetworkClient` (how bytes move), and
//   b. the routing, a `DuoNetworkActionProvider` (how each step is addressed);
// and on the node side `NodeStepRunner.run(connection:route:)` serves each step over a
// `NodeStepConnection` on the other end of the same pipe.
//
//   swift run example-custom-transport        # no arguments: the node runs in this process
import CloudNode
import ExampleSupport
import Foundation
import duo

// MARK: - a. The transport

/// The app's transport. Each step opens a fresh pipe to the node (one step = one channel) and
/// names the step by the action its routing selected.
final class PipeTransport: NetworkClient {
    private let node: PipeNode
    private var pipe: MessagePipe?

    init(node: PipeNode) { self.node = node }

    nonisolated(nonsending) func connect(action: NetworkAction, params: String?) async throws {
        // `action` is the step the provider chose; `params` may carry a key id. Over BLE this is
        // where you would connect and write the route to a control characteristic.
        try await disconnect()
        pipe = try node.open(algorithm: action.algorithm, action: action.action, params: params)
    }

    nonisolated(nonsending) func send(bytes: Data) async throws {
        guard let pipe else { throw NetworkError.notConnected }
        try pipe.toNode.post(bytes)
    }

    nonisolated(nonsending) func send(text: String) async throws {
        // Duo sends text only for a WebSocket token; this link has none. Kept for the contract.
        guard let pipe else { throw NetworkError.notConnected }
        try pipe.toNode.post(Data(text.utf8))
    }

    nonisolated(nonsending) func read() async throws -> Data {
        guard let pipe else { throw NetworkError.notConnected }
        return try await pipe.toApp.next()
    }

    nonisolated(nonsending) func disconnect() async throws {
        // Close the channel; stay reusable for the next connect.
        pipe?.close()
        pipe = nil
    }
    // sendPostRequest keeps its default (throws .postRequestUnsupported): duo never needs it.
}

// MARK: - b. The routing

/// The seed's custom routing for ECDSA: override whichever fields you want, per step. The
/// action it supplies is exactly what `PipeTransport.connect` receives.
struct CustomActions: DuoNetworkActionProvider {
    let keygen: NetworkAction = DuoAction.ECDSA.Keygen(path: "my-keygen-route")
    let reconcile: NetworkAction = DuoAction.ECDSA.Reconcile(
        path: "duo", action: "reconcile", protocol: "duo-instance", algorithm: "ecdsa"
    )
    let refresh: NetworkAction = DuoAction.ECDSA.KeyRefresh(protocol: "my-duo-instance")
    // The `action` segment renamed: the node side below must know the name.
    let sign: NetworkAction = DuoAction.ECDSA.Signature(action: "signature")
    let `import`: NetworkAction = DuoAction.ECDSA.Import()
}

// MARK: - The node's end of the link

/// What the node runs behind the link: it maps each opened channel to a duo step and serves it
/// with the session runner, in its own task.
struct PipeNode: Sendable {
    let runner: NodeStepRunner

    struct UnknownRoute: Error {}

    func open(algorithm: String, action: String, params: String?) throws -> MessagePipe {
        let algorithms: [String: SessionAlgorithm] = ["ecdsa": .ecdsa, "eddsa": .eddsa]
        let operations: [String: SessionOperation] = [
            "keygen": .keygen, "reconcile": .reconcile, "refresh": .refresh, "sign": .sign, "signature": .sign,
            "import": .import,
        ]
        print("   [link] open \(algorithm)/\(action)" + (params == nil ? "" : " with params"))
        guard let algorithm = algorithms[algorithm], let operation = operations[action] else { throw UnknownRoute() }
        let pipe = MessagePipe()
        let route = NodeStepRoute(algorithm: algorithm, operation: operation, params: params)
        Task { [runner] in _ = await runner.run(connection: Connection(pipe: pipe), route: route) }
        return pipe
    }

    /// The node's side of one pipe, as the runner sees a connection.
    struct Connection: NodeStepConnection {
        let pipe: MessagePipe
        func read() async throws -> Data { try await pipe.toNode.next() }
        func send(_ data: Data) async throws { try pipe.toApp.post(data) }
        func close(code: UInt16, reason: String) async { pipe.close() }
    }
}

// MARK: - Wiring

let status = await ExampleRun.main("custom NetworkClient + DuoNetworkActionProvider over an in-process pipe",
                                   allowRemote: false, listen: false) { target in
    guard let runner = target.embedded?.runner else { return false }
    let node = PipeNode(runner: runner)
    let messageSigner = SoftwareEd25519MessageSigner()
    let storageClient = InMemoryStorageClient()

    // Both halves — your transport and your routing — to the custom-transport overload.
    let ecdsa = SilentShard.ECDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: target.cloudVerifyingKey,
        storageClient: storageClient,
        networkClient: PipeTransport(node: node),
        actionProvider: CustomActions()
    )
    // The stock routing works over a custom transport too.
    let eddsa = SilentShard.EdDSA.duoInitiator(
        messageSigner: messageSigner,
        cloudVerifyingKey: target.cloudVerifyingKey,
        storageClient: storageClient,
        networkClient: PipeTransport(node: node),
        actionProvider: .eddsa
    )

    let ecdsaVerified = try await ExampleRun.keygenSignVerify(ecdsa)
    let eddsaVerified = try await ExampleRun.keygenSignVerify(eddsa)
    return ecdsaVerified && eddsaVerified
}
exit(status)
