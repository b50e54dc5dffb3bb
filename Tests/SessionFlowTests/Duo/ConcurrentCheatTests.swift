import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// Security review finding 12, second half: concurrent sessions of a banned device must learn nothing more
/// than one. A cheating device runs several signing sessions at once; each failed multiplication (or
/// KOS, Γ) check tells it one bit about the node's secret. The first failure bans the device — but the
/// node re-read the ban only before sending its next flight, after it had already run its check of the
/// next session's message: a session held back until the ban answered ABORT_AND_BAN when its corrupted
/// R2 failed the check and BANNED when it passed — the abort code was the check's outcome. Now the ban is
/// read before the node's step over the app's messages runs (under a per-device turn for signing, so
/// no check of the device runs between a failed check and its ban): the held session gets BANNED
/// either way, its check never runs.
@Suite("Finding 12: concurrent sessions of a banned device learn nothing more", .serialized, .heavy, .timeLimit(.minutes(30)))
struct ConcurrentCheatTests {
    /// A one-shot signal a task can wait for.
    final class Signal: Sendable {
        private let state = LockedValue<(fired: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
        func fire() {
            let waiters = state.withLock { state in
                state.fired = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let fired = state.withLock { state in
                    if !state.fired { state.waiters.append(continuation) }
                    return state.fired
                }
                if fired { continuation.resume() }
            }
        }
    }

    @Test("a session held back until the device is banned gets BANNED, whether its R2 would fail the check or not",
          arguments: [true, false])
    func aHeldBackSessionLearnsNothing(corruptsItsR2: Bool) async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)

        // Session 2: past its SETUP (the device was not banned then), its R2 held back.
        let reached = Signal(), go = Signal()
        let flip = flipping(tag: DKLsTag.signRound2Direct, offset: 300)   // inside ã: the multiplication check fails
        let corrupt: @Sendable (ProtocolMessage) -> ProtocolMessage
        if corruptsItsR2 { corrupt = flip } else { corrupt = { message in message } }
        let holdR2: @Sendable (Int) async -> Void = { flight in
            guard flight == 1 else { return }
            reached.fire()
            await go.wait()
        }
        let held = Task { () async throws -> (NodeStepReport, SilentShardError?) in
            try await BanTests.cheat(fixture, keyshare: keyshare, corrupt: corrupt, beforeSend: holdR2)
        }
        await reached.wait()

        // Session 1 cheats and is caught: the device is banned.
        let (first, _) = try await BanTests.cheat(fixture, keyshare: keyshare)
        #expect(first == .failed(.abortProtocolAndBanParty(party: .app)))
        #expect(try fixture.store.isBanned(deviceKey: device.identity))

        // Session 2's R2 now reaches the node: refused as banned before any check of it runs, the same
        // answer for a corrupted and an honest R2.
        go.fire()
        let (second, secondSaw) = try await held.value
        #expect(second == .failed(.partyBanned(party: .app)), "corrupted R2: \(corruptsItsR2)")
        #expect(secondSaw == .deviceBanned(by: .node(1)), "corrupted R2: \(corruptsItsR2)")
    }
}
