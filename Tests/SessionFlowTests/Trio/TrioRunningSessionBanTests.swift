import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.4 at a trio signer: a device banned while its session runs gets no further protocol flight.
@Suite("Trio: a ban reaches running sessions (session.md §9.4)", .heavy, .timeLimit(.minutes(30)))
struct TrioRunningSessionBanTests {
    @Test("node A bans the device after its first flight: ABORT(BANNED) instead of its second; no signature")
    func banDuringSigningWithA() async throws {
        let banNow = LockedValue<(@Sendable () -> Void)?>(nil)
        let fixture = try TrioFixture(algorithm: .ecdsa, tamperAppReads: { index, data in
            if index == 0, let ban = banNow.withLock({ $0 }) { ban() }
            return data
        })
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        let message = Data(repeating: 0x52, count: 32)
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeA),
                                hash: message, keyshare: keyshare))
        let store = fixture.storeA
        banNow.withLock {
            $0 = { _ = try? store.ban(deviceKey: device.identity, reason: "test: banned elsewhere",
                                      instanceId: [UInt8](repeating: 9, count: 32), party: "node 1") }
        }
        await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeA)
        }
        #expect(fixture.client.reports.contains(.failed(.partyBanned(party: .app))))
        banNow.withLock { $0 = nil }
        #expect(try store.liftBan(deviceKey: device.identity, operator: "test operator"))
        #expect(try verifyECDSA(try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeA),
                                hash: message, keyshare: keyshare))
    }
}
