/// The close codes the node sends (session.md §2.1; 4xxx are this node's private codes).
package enum NodeCloseCode: UInt16, Sendable, Equatable {
    /// The step finished.
    case normal = 1000
    /// The node is shutting down.
    case goingAway = 1001
    /// A malformed message (for example a text message after the first).
    case malformed = 1002
    /// The step was rejected by policy.
    case policyViolation = 1008
    /// A message exceeded the maximum message size.
    case messageTooLarge = 1009
    /// The handler failed.
    case internalError = 1011
    /// The node is shutting down or overloaded.
    case overloaded = 1013
    /// The token was missing or did not verify.
    case unauthorized = 4401
    /// The token did not arrive in time.
    case authenticationTimeout = 4408
    /// The step went idle for longer than the per-step timeout.
    case stepTimeout = 4504
    /// The route is known but this node has no handler for it yet.
    case routeNotServed = 4501

    /// A short reason sent with the close (never contains secrets).
    package var reason: String {
        switch self {
        case .normal: "done"
        case .goingAway: "shutting down"
        case .malformed: "malformed"
        case .policyViolation: "rejected"
        case .messageTooLarge: "message too large"
        case .internalError: "internal error"
        case .overloaded: "overloaded"
        case .unauthorized: "unauthorized"
        case .authenticationTimeout: "token timeout"
        case .stepTimeout: "step timeout"
        case .routeNotServed: "route not served by this node"
        }
    }
}
