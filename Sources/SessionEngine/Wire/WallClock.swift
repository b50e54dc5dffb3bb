import Foundation

/// Wall-clock time in milliseconds since the Unix epoch: SETUP timestamps, the replay window, certificate
/// and presignature validity. Sessions and node runners take one, so tests set every time window from a
/// clock they control instead of racing the real one (`docs/protocol/session.md` §5.3, §9.6).
package typealias MillisecondClock = @Sendable () -> UInt64

/// The system's wall clock.
package enum WallClock {
    /// Milliseconds since the Unix epoch now (0 for a clock set before 1970).
    package static let milliseconds: MillisecondClock = {
        UInt64(max(0, Date().timeIntervalSince1970 * 1000))
    }
}
