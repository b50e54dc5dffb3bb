import Dispatch

/// Runs MPC computation off Swift's cooperative pool, on a dedicated concurrent queue, so long
/// protocol rounds never block the pool's threads. Every mode's machines step here.
package enum SessionCompute {
    private static let queue = DispatchQueue(label: "silentshard.session.compute", qos: .userInitiated, attributes: .concurrent)

    /// Runs `body` on the compute queue and returns its value.
    package static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            queue.async { continuation.resume(with: Result { try body() }) }
        }
    }
}
