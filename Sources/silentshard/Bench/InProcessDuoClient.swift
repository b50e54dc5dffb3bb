import MPCCrypto
import CloudNode
import Foundation
import SilentShardCore
import InMemoryTransport

/// The bench's in-memory transport: each `connect` opens an in-process pipe and serves the step with
/// a `NodeStepRunner` on the other end — the whole SDK and node path (session layer, SQLite store)
/// without sockets, so the figure is compute plus storage.
final class InProcessDuoClient: NetworkClient, @unchecked Sendable {
    private let runner: NodeStepRunner
    private let state = LockedValue<(app: InMemoryNetworkClient?, nodeEnd: InMemoryNetworkClient?)>((nil, nil))
    private let sent = LockedValue(0)

    init(runner: NodeStepRunner) { self.runner = runner }

    /// Bytes the app sent since the last `resetCount()`.
    var bytesSent: Int { sent.withLock { $0 } }
    func resetCount() { sent.withLock { $0 = 0 } }

    func connect(action: NetworkAction, params: String?) async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: action, params: params)
        try await node.connect(action: action, params: params)
        // The duo node's WebSocket routes (the operation table's duo rows).
        guard let operation = OperationTable.webSocketOperation(action: action.action),
              OperationTable.webSocketOperations(in: .duo).contains(operation)
        else { throw NetworkError.handshakeRejected(status: 404) }
        let route = NodeStepRoute(algorithm: action.algorithm == "eddsa" ? .eddsa : .ecdsa, operation: operation, params: params)
        let runner = self.runner
        Task { _ = await runner.run(connection: PipeConnection(end: node), route: route) }
        state.withLock { $0 = (app, node) }
    }

    func send(bytes: Data) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        sent.withLock { $0 += bytes.count }
        try await app.send(bytes: bytes)
    }

    func send(text: String) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await app.send(text: text)
    }

    func read() async throws -> Data {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        guard case .binary(let data) = try await app.readMessage() else { throw NetworkError.closedByPeer(code: 1000, reason: "") }
        return data
    }

    /// Closes the app's end; the node's end closes after a grace period (like a socket close
    /// reaching the node after the frames in flight), which ends a node step still waiting to read.
    func disconnect() async throws {
        let (app, nodeEnd) = state.withLock { ($0.app, $0.nodeEnd) }
        try? await app?.disconnect()
        Task {
            try? await Task.sleep(for: .milliseconds(300))
            try? await nodeEnd?.disconnect()
        }
        state.withLock { $0 = (nil, nil) }
    }

    /// The node's end of the pipe.
    private struct PipeConnection: NodeStepConnection {
        let end: InMemoryNetworkClient
        func read() async throws -> Data {
            guard case .binary(let data) = try await end.readMessage() else { throw NetworkError.protocolViolation(closeCode: 1002) }
            return data
        }
        func send(_ data: Data) async throws { try await end.send(bytes: data) }
        /// A text message stands in for the close, so the app's pending read ends.
        func close(code: UInt16, reason: String) async {
            try? await end.send(text: "close \(code)")
            try? await end.disconnect()
        }
    }
}
