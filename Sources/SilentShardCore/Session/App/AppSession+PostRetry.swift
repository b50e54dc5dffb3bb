import Foundation

/// The POSTs' retry (`docs/protocol/session.md` §13.8 item 6): the duo export POST, a FINAL_REQUEST and a PRESIG_QUERY
/// are retried by the steps' policy, through the same `StepRetryPolicy.run` as `AppStepEngine.run` — an
/// authenticated STALE_TIMESTAMP once with the node's time, KEY_BUSY with the steps' backoff (waited with
/// `AppDeadlines.backoff`). A refused token is not refreshed here: the SDK's transport already replaces it once per
/// POST (HTTP 401, `WebSocketClientEngine.post`), and `TokenRequest.afterRefusal` is asked at most once per POST.
extension AppSession {
    /// Runs `attempt` (one POST exchange, including the check of its answer) until it succeeds or the steps' policy
    /// gives up. `attempt` must be safe to repeat (session.md §13.8 item 6): it resends the same FINAL_REQUEST bytes,
    /// or builds a fresh request (PRESIG_QUERY, export).
    package func retryingPost<T>(_ attempt: () async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        try await StepRetryPolicy.run(clock: clock, tokenRefresher: nil, wait: engine.deadlines.backoff, attempt)
    }
}
