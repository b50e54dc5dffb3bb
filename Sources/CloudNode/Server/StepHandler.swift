import Foundation

/// What a step handler gets: the route, the untrusted `params`, who authenticated, and the
/// connection to `read`/`send` on.
package struct StepContext: Sendable {
    package var route: NodeRoute
    /// The `params` query value (a routing hint; the session layer checks it against SETUP).
    package var params: String?
    package var principal: Principal
    package var connection: NodeConnection
    /// The app's token as it arrived (verified into `principal`), for a trio node A to forward to
    /// node B in LINK_OPEN (session.md §6.1 rule 3). Never log it.
    package var token: String? = nil
    /// The client's address as the session.md §9.5 limits count it.
    package var clientAddress: String = ""
    /// Inter-node link (`/v3/peer`) only: the handler reports its verdict on the LINK_OPEN frame here.
    /// Accepted: the connection is authenticated (larger messages are read; it stops counting against
    /// its address). Refused: counted as a failed authentication of the address, which blocks an address
    /// that keeps trying (security review finding 5). Other routes are authenticated by their token
    /// before the handler runs and ignore it.
    package var linkOpened: @Sendable (_ accepted: Bool) -> Void = { _ in }
}

/// Runs one protocol step on an authenticated connection (the session runner implements it).
/// Runs on the Swift side, never on the service thread. Returning closes the connection with
/// 1000; throwing ``NodeServerError/timeout`` closes with the step-timeout code, other errors with 1011.
package protocol StepHandler: Sendable {
    func run(_ context: StepContext) async throws
}

/// Echoes every binary message back until the peer closes (tests and smoke checks).
package struct EchoStepHandler: StepHandler {
    package init() {}
    package func run(_ context: StepContext) async throws {
        while true {
            let message: Data
            do {
                message = try await context.connection.read()
            } catch .connectionClosed(_) {
                return
            }
            try await context.connection.send(message, binary: true)
        }
    }
}

/// Closes every step with ``NodeCloseCode/routeNotServed`` (a route this node has no runner for, e.g. trio routes on a duo node).
package struct UnservedStepHandler: StepHandler {
    package init() {}
    package func run(_ context: StepContext) async throws {
        context.connection.close(code: .routeNotServed)
    }
}

/// Which handler serves which route: per-route entries (by ``NodeRoute/description``), else the fallback.
package struct StepHandlerRegistry: Sendable {
    private var handlers: [String: any StepHandler] = [:]
    /// Serves routes without an entry.
    package var fallback: any StepHandler

    package init(fallback: any StepHandler = UnservedStepHandler()) {
        self.fallback = fallback
    }

    /// Serves `route` with `handler`.
    package mutating func register(_ handler: any StepHandler, for route: NodeRoute) {
        handlers[route.description] = handler
    }

    /// The handler for `route`.
    package func handler(for route: NodeRoute) -> any StepHandler {
        handlers[route.description] ?? fallback
    }
}
