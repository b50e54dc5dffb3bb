import Foundation
import MPCCrypto
import SilentShardCore

/// A wall clock that moves only when the test moves it (ms since the Unix epoch). Handed to the app
/// sessions, the node runners, the store and the limiter of one test, it keeps every time window
/// (SETUP timestamps, replay retention, leases, expiries, rate-limit windows) independent of how long
/// the machine takes to do the work in between.
public final class ManualClock: Sendable {
    private let now: LockedValue<UInt64>

    /// Starts at `milliseconds` (default: the real time when the clock is made, so certificates and
    /// tokens made from the real clock are valid at its start).
    public init(milliseconds: UInt64? = nil) {
        now = LockedValue(milliseconds ?? WallClock.milliseconds())
    }

    /// The clock's time in ms.
    public var milliseconds: UInt64 { now.withLock { $0 } }

    /// The clock's time in whole seconds.
    public var seconds: UInt64 { milliseconds / 1000 }

    /// The clock as the `@Sendable () -> UInt64` (ms) that sessions, runners and the limiter take.
    public var read: @Sendable () -> UInt64 { { [self] in milliseconds } }

    /// The clock as the `@Sendable () -> Date` that the node store takes.
    public var date: @Sendable () -> Date {
        { [self] in Date(timeIntervalSince1970: TimeInterval(milliseconds) / 1000) }
    }

    /// Moves the clock forward.
    public func advance(seconds: Double) { advance(milliseconds: UInt64(seconds * 1000)) }

    /// Moves the clock forward.
    public func advance(milliseconds: UInt64) { now.withLock { $0 += milliseconds } }
}
