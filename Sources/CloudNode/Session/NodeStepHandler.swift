import Foundation
import SilentShardCore

/// Serves a node's step routes on a ``NodeServer`` with its ``NodeStepRunner``: the app's steps (duo
/// `/v3/{algorithm}/{action}`, subprotocol `duo-instance`; trio node A `/v3/{path}/{action}`, EdDSA
/// `/v3/{path}/eddsa/{action}`, subprotocol `trio`) and, at trio's node B, the inter-node link
/// (`/v3/peer`, subprotocol `silentshard-peer`). A route of another mode, or an operation the node does
/// not serve, is closed with `routeNotServed`.
package struct NodeStepHandler: StepHandler {
    package let runner: NodeStepRunner

    package init(runner: NodeStepRunner) {
        self.runner = runner
    }

    package func run(_ context: StepContext) async throws {
        let connection = ServerStepConnection(connection: context.connection)
        switch (context.route.mode, runner.party.mode) {
        case (.peer, .trio):
            _ = await runner.serveLink(connection: connection, linkOpened: context.linkOpened)
        case (.duo, .duo), (.trio, .trio):
            guard let operation = Self.operation(context.route.action),
                  runner.party.servedOperations.contains(operation)
            else {
                context.connection.close(code: .routeNotServed)
                return
            }
            let route = NodeStepRoute(algorithm: context.route.algorithm, operation: operation, params: context.params)
            _ = await runner.run(connection: connection, route: route, token: context.token.map { Array($0.utf8) },
                                 principal: context.principal, clientAddress: context.clientAddress.isEmpty ? nil : context.clientAddress)
        default:
            context.connection.close(code: .routeNotServed)
        }
    }

    /// The operation a WebSocket route's action names (the operation table's action strings; nil for a POST-only
    /// action such as preSignFinal's).
    package static func operation(_ action: String) -> SessionOperation? {
        OperationTable.webSocketOperation(action: action)
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
