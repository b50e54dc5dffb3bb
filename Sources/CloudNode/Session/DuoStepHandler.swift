import Foundation
import SilentShardCore

/// Serves the duo routes of a ``NodeServer`` with the session runner: each authenticated WebSocket
/// step becomes one ``DuoStepRunner/run(connection:route:)``.
package struct DuoStepHandler: StepHandler {
    package let runner: DuoStepRunner

    package init(runner: DuoStepRunner) {
        self.runner = runner
    }

    package func run(_ context: StepContext) async throws {
        guard context.route.mode == .duo, let operation = Self.operation(context.route.action) else {
            context.connection.close(code: .routeNotServed)
            return
        }
        let algorithm = context.route.algorithm
        _ = await runner.run(connection: ServerStepConnection(connection: context.connection),
                             route: NodeStepRoute(algorithm: algorithm, operation: operation, params: context.params),
                             principal: context.principal)
    }

    /// The duo operation a route's action names (the SDK's default action strings).
    static func operation(_ action: String) -> SessionOperation? {
        switch action {
        case "keygen": return .keygen
        case "reconcile": return .reconcile
        case "refresh": return .refresh
        case "sign": return .sign
        case "import": return .import
        default: return nil
        }
    }
}

/// A server connection as the session runner's ``NodeStepConnection``.
struct ServerStepConnection: NodeStepConnection {
    let connection: NodeConnection

    func read() async throws -> Data { try await connection.read() }

    func send(_ data: Data) async throws { try await connection.send(data, binary: true) }

    func close(code: UInt16, reason: String) async {
        connection.close(code: NodeCloseCode(rawValue: code) ?? (code == 1002 ? .malformed : .internalError))
    }
}
