import MPCCrypto

/// Runs an operation on a task of its own that a transport hook can cancel mid-step, for the tests that
/// cancel before every message (`CancelEverywhereTests`, `TrioCancelEverywhereTests`).
public enum CancellableRun {
    /// Runs `body` on a new task. `arm` gets a closure that cancels that task the first time it is called
    /// (later calls do nothing and return false); wire it into the client's hook. The task starts only
    /// after it can be cancelled. Returns the task's result and whether it was cancelled.
    public static func run(arm: (@escaping @Sendable () -> Bool) -> Void,
                           _ body: @escaping @Sendable () async throws -> Void) async -> (result: Result<Void, any Error>, cancelled: Bool) {
        let running = LockedValue<Task<Void, any Error>?>(nil)
        let fired = LockedValue(false)
        arm {
            guard fired.withLock({ done in defer { done = true }; return !done }) else { return false }
            running.withLock { $0 }?.cancel()
            return true
        }
        let (gate, opened) = AsyncStream<Void>.makeStream()
        let task = Task {
            for await _ in gate { break }
            try await body()
        }
        running.withLock { $0 = task }
        opened.yield()
        opened.finish()
        return (await task.result, fired.withLock { $0 })
    }
}
