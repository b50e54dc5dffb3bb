import Foundation

/// The app's per-step deadline (issue 22 item 5): a step that has not ended `stepTimeout` after it
/// started ends with `SilentShardError.timeout`, aborting as the protocol allows (an ABORT before
/// COMMIT; in doubt after it). The wait is injectable so tests decide when a deadline passes instead of
/// racing a real clock.
package struct AppDeadlines: Sendable {
    /// Suspends until `duration` has passed (throws when the task is cancelled).
    package var sleep: @Sendable (Duration) async throws -> Void
    /// The retry policy's backoff between two attempts of a step or a POST (`StepRetryPolicy`, KEY_BUSY); tests
    /// record it instead of sleeping.
    package var backoff: @Sendable (Duration) async throws -> Void

    package init(sleep: @escaping @Sendable (Duration) async throws -> Void,
                 backoff: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) }) {
        self.sleep = sleep
        self.backoff = backoff
    }

    /// The real clock.
    package static let system = AppDeadlines(sleep: { try await Task.sleep(for: $0) })
}

/// A `NetworkClient` that names the app's per-step deadline (`WebsocketConfig.stepTimeout`): the default
/// WebSocket clients do, from their configuration; an app's own client may conform to choose one (else
/// `WebsocketConfig.defaultStepTimeout`).
public protocol StepTimeoutConfigurable: AnyObject {
    /// How long a step may wait for the nodes; nil for no limit.
    var stepTimeout: Duration? { get }
}

/// Reached a step's deadline.
struct StepDeadlineExceeded: Error {}

/// A `NetworkClient` (not `Sendable`: seed contract) held where `Sendable` is required: by the session,
/// and by the child task that races a step's deadline. It is used by one task at a time: every use happens
/// inside a step holding the engine's gate (or, for a POST, on its own request), and a step awaits the
/// deadline's child before it touches the client again.
final class UncheckedTransport: @unchecked Sendable {
    let client: any NetworkClient
    init(_ client: any NetworkClient) { self.client = client }
}

extension AppDeadlines {
    /// Runs `operation` (a transport call) unless `deadline` passes first; then it is cancelled and
    /// `StepDeadlineExceeded` thrown. Without a deadline it just runs.
    func run<T: Sendable>(until deadline: ContinuousClock.Instant?,
                          _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        guard let deadline else { return try await operation() }
        let remaining = deadline - ContinuousClock.now
        guard remaining > .zero else { throw StepDeadlineExceeded() }
        let sleep = self.sleep
        return try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await operation() }
            group.addTask {
                try await sleep(remaining)
                return nil
            }
            defer { group.cancelAll() }
            guard let first = try await group.next(), let value = first else { throw StepDeadlineExceeded() }
            return value
        }
    }
}
