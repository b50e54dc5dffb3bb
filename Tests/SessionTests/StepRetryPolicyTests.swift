import Foundation
import SilentShardCore
import Testing

/// The app's retry decisions (session.md §5.3, §10), shared by duo and trio, without I/O.
@Suite("StepRetryPolicy and SessionClock")
struct StepRetryPolicyTests {
    @Test func clockSkewIsCorrectedOnceWithTheNodesTime() {
        var policy = StepRetryPolicy()
        #expect(policy.decide(after: .clockSkew(nodeTime: 42_000)) == .correctClock(toNodeTime: 42_000))
        // A second skew in the same step, or one without an authenticated time, is the error.
        #expect(policy.decide(after: .clockSkew(nodeTime: 43_000)) == .fail)
        var fresh = StepRetryPolicy()
        #expect(fresh.decide(after: .clockSkew(nodeTime: nil)) == .fail)
    }

    @Test func keyBusyBacksOffFiveTimesThenFails() {
        var policy = StepRetryPolicy()
        let waits = (0..<StepRetryPolicy.busyRetries).map { _ in policy.decide(after: .keyBusy) }
        #expect(waits == [25, 50, 100, 200, 400].map { StepRetryPolicy.Decision.retry(after: .milliseconds($0)) })
        #expect(policy.decide(after: .keyBusy) == .fail)
    }

    @Test func otherErrorsAreNotRetried() {
        var policy = StepRetryPolicy()
        for error in [SilentShardError.timeout, .replayDetected, .authorizationDenied, .staleKeyshare, .keyNotFound(keyId: nil)] {
            #expect(policy.decide(after: error) == .fail)
        }
    }

    @Test func theClockAdoptsTheNodesTime() {
        let device = LockedBox(1_000_000)
        let clock = SessionClock(device: { device.value })
        #expect(clock.milliseconds == 1_000_000)
        clock.correct(toNodeTime: 400_000)
        #expect(clock.milliseconds == 400_000)
        device.value = 1_000_500
        #expect(clock.milliseconds == 400_500, "the offset stays; the device clock keeps running")
    }

    final class LockedBox: @unchecked Sendable {
        private let lock = NSLock()
        private var stored: UInt64
        init(_ value: UInt64) { stored = value }
        var value: UInt64 {
            get { lock.withLock { stored } }
            set { lock.withLock { stored = newValue } }
        }
    }
}

/// AUTH_INVALID is retried once, and only when the transport can replace the token.
@Suite("StepRetryPolicy: token refresh")
struct StepRetryPolicyTokenTests {
    @Test func aRefusedTokenIsReplacedOnceWhenTheTransportCan() {
        let refused = SilentShardError.authenticationFailed(reason: SilentShardError.invalidTokenReason)
        var policy = StepRetryPolicy(canRefreshToken: true)
        #expect(policy.decide(after: refused) == .refreshToken)
        #expect(policy.decide(after: refused) == .fail)
        var atTheDoor = StepRetryPolicy(canRefreshToken: true)
        #expect(atTheDoor.decide(after: .authenticationFailed(reason: SilentShardError.tokenRefusedReason)) == .refreshToken)
        var without = StepRetryPolicy()
        #expect(without.decide(after: refused) == .fail)
        // A missing token or a bad device signature is not a token to refresh.
        var other = StepRetryPolicy(canRefreshToken: true)
        #expect(other.decide(after: .authenticationFailed(reason: "missing token")) == .fail)
        #expect(other.decide(after: .authenticationFailed(reason: "device signature")) == .fail)
    }
}
