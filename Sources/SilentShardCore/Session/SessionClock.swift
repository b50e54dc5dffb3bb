import Foundation
import MPCCrypto

/// The app's clock for SETUP timestamps and certificate checks (§5.3): the device clock, corrected by the
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

/// What the app does after one attempt of a step failed (§5.3, §10), decided without I/O and the same for
/// every mode: retry once with the node's time after an authenticated STALE_TIMESTAMP (nothing was stored;
/// a fresh instance id), retry after a short backoff on KEY_BUSY (another share-changing session of the
/// key — often this app's own previous step, whose lease a node releases a moment after its last frame),
/// else give up with the error.
package struct StepRetryPolicy: Sendable {
    package enum Decision: Sendable, Equatable {
        case correctClock(toNodeTime: UInt64)
        case retry(after: Duration)
        case fail
    }

    /// KEY_BUSY retries, waiting 25, 50, 100, 200 and 400 ms.
    package static let busyRetries = 5
    private var clockCorrected = false
    private var busyRetriesDone = 0

    package init() {}

    package mutating func decide(after error: SilentShardError) -> Decision {
        switch error {
        case .clockSkew(let nodeTime?) where !clockCorrected:
            clockCorrected = true
            return .correctClock(toNodeTime: nodeTime)
        case .keyBusy where busyRetriesDone < Self.busyRetries:
            defer { busyRetriesDone += 1 }
            return .retry(after: .milliseconds(25 << busyRetriesDone))
        default:
            return .fail
        }
    }

    /// Runs `attempt` until it succeeds or the policy gives up; the clock is corrected in `clock`.
    package static func run<T>(clock: SessionClock, _ attempt: () async throws(SilentShardError) -> T)
        async throws(SilentShardError) -> T {
        var policy = StepRetryPolicy()
        while true {
            do {
                return try await attempt()
            } catch {
                switch policy.decide(after: error) {
                case .correctClock(let nodeTime): clock.correct(toNodeTime: nodeTime)
                case .retry(let delay): try? await Task.sleep(for: delay)
                case .fail: throw error
                }
            }
        }
    }
}
