import Foundation
import MPCCrypto

/// The app's clock for SETUP timestamps and certificate checks (session.md §5.3): the device clock, corrected by the
/// node's time from an authenticated STALE_TIMESTAMP REJECT, so a phone with a wrong clock still works.
/// One per session object; duo and trio alike.
package final class SessionClock: Sendable {
    private let device: MillisecondClock
    /// Milliseconds added to the device clock.
    private let offset = LockedValue<Int64>(0)

    package init(device: @escaping MillisecondClock) {
        self.device = device
    }

    /// Now, ms since the epoch, corrected.
    package var milliseconds: UInt64 {
        UInt64(clamping: Int64(clamping: device()) + offset.withLock { $0 })
    }

    /// Adopts `nodeTime` (ms since the epoch) as now.
    package func correct(toNodeTime nodeTime: UInt64) {
        offset.withLock { $0 = Int64(clamping: nodeTime) - Int64(clamping: device()) }
    }
}

/// What the app does after one attempt of a step failed (session.md §5.3, §10), decided without I/O and the same for
/// every mode: retry once with the node's time after an authenticated STALE_TIMESTAMP (nothing was stored;
/// a fresh instance id), retry after a short backoff on KEY_BUSY (another share-changing session of the
/// key — often this app's own previous step, whose lease a node releases a moment after its last frame),
/// retry once with a fresh token after AUTH_INVALID (or a 4401 close, or HTTP 401) when the transport can get one (a refused SETUP
/// changed nothing at any node), else give up with the error.
package struct StepRetryPolicy: Sendable {
    package enum Decision: Sendable, Equatable {
        case correctClock(toNodeTime: UInt64)
        case retry(after: Duration)
        case refreshToken
        case fail
    }

    /// KEY_BUSY retries, waiting 25, 50, 100, 200 and 400 ms.
    package static let busyRetries = 5
    private var clockCorrected = false
    private var busyRetriesDone = 0
    private let canRefreshToken: Bool
    private var tokenRefreshed = false

    /// `canRefreshToken`: the transport can replace a refused token (a configured token provider).
    package init(canRefreshToken: Bool = false) {
        self.canRefreshToken = canRefreshToken
    }

    package mutating func decide(after error: SilentShardError) -> Decision {
        switch error {
        case .clockSkew(let nodeTime?) where !clockCorrected:
            clockCorrected = true
            return .correctClock(toNodeTime: nodeTime)
        case .keyBusy where busyRetriesDone < Self.busyRetries:
            defer { busyRetriesDone += 1 }
            return .retry(after: .milliseconds(25 << busyRetriesDone))
        case _ where error.isRefusedToken && canRefreshToken && !tokenRefreshed:
            tokenRefreshed = true
            return .refreshToken
        default:
            return .fail
        }
    }

    /// Runs `attempt` until it succeeds or the policy gives up; the clock is corrected in `clock`, a
    /// refused token replaced through `tokenRefresher` (nil: the transport cannot), a backoff waited with `wait`
    /// (`AppDeadlines.backoff`); a cancellation during the wait, or before another attempt, ends with `cancelled`. Steps (`AppStepEngine.run`) and POSTs (`AppSession.retryingPost`) both retry here.
    package static func run<T>(clock: SessionClock, tokenRefresher: (any TokenRefreshingClient)? = nil,
                               wait: @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                               _ attempt: () async throws(SilentShardError) -> T) async throws(SilentShardError) -> T {
        var policy = StepRetryPolicy(canRefreshToken: tokenRefresher?.canRefreshToken ?? false)
        while true {
            do {
                return try await attempt()
            } catch {
                switch policy.decide(after: error) {
                case .correctClock(let nodeTime): clock.correct(toNodeTime: nodeTime)
                case .retry(let delay):
                    // `wait` throws only when the task is cancelled (`Task.sleep`): no further attempt (audit L2).
                    do { try await wait(delay) } catch { throw .cancelled }
                case .refreshToken: tokenRefresher?.tokenWasRefused()
                case .fail: throw error
                }
                // A cancelled task makes no further attempt (each may sign a new SETUP with the device key).
                if Task.isCancelled { throw .cancelled }
            }
        }
    }
}
