/// How a node waits out its per-frame deadlines (`docs/protocol/session.md` §5.4): the system clock in
/// production; tests inject deadlines they control, so that "a peer slower than the deadline" does not
/// depend on the machine's speed.
package struct NodeDeadlines: Sendable {
    /// Waits `duration` (throws when the waiting task is cancelled: the awaited message came first).
    package var sleep: @Sendable (_ duration: Duration) async throws -> Void
    /// Told each time a deadline expired while the step was waiting (the step then sees `.timeout`).
    package var expired: @Sendable () -> Void

    package init(sleep: @escaping @Sendable (_ duration: Duration) async throws -> Void, expired: @escaping @Sendable () -> Void = {}) {
        self.sleep = sleep
        self.expired = expired
    }

    /// The system clock.
    package static let system = NodeDeadlines(sleep: { duration in try await Task.sleep(for: duration) })
}
