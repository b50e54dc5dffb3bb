import SilentShardCore

/// What the route of a step says: its algorithm and operation (duo `/v3/{algorithm}/{action}`, trio
/// `/v3/{path}/{action}`) and `params`.
package struct NodeStepRoute: Sendable, Equatable {
    package var algorithm: SessionAlgorithm
    package var operation: SessionOperation
    /// The route's `params` (hex key id) or nil.
    package var params: String?

    package init(algorithm: SessionAlgorithm, operation: SessionOperation, params: String?) {
        self.algorithm = algorithm
        self.operation = operation
        self.params = params
    }
}
