import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// session.md §9.4 "aborts every running session of that device (sessions re-read the ban table before each flight
/// they send)": a device banned while its signing session runs — by another session, or another process
/// of the cluster, writing the shared ban table — gets no further protocol message from the node (duo's node,
/// trio's signer A).
@Suite("A ban reaches running sessions (session.md §9.4)", .heavy, .timeLimit(.minutes(30)))
struct RunningSessionBanTests {
    @Test("banned after the node's first flight: the node sends ABORT(BANNED) instead of its second; no signature",
          arguments: Keyshare.Mode.allCases)
    func banDuringSigning(mode: Keyshare.Mode) async throws {
        let banNow = LockedValue<(@Sendable () -> Void)?>(nil)
        // The app's first read in a session is the node's first flight (ACCEPT + round 1).
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa, tamperAppReads: { index, data in
            if index == 0, let ban = banNow.withLock({ $0 }) { ban() }
            return data
        })
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        let message = Data(repeating: mode == .duo ? 0x51 : 0x52, count: 32)
        // Trio signs with A, the node whose store is written.
        #expect(try verifyECDSA(try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message), hash: message,
                                keyshare: keyshare))

        let store = fixture.entryStore
        let party = mode == .duo ? "node" : "node 1"
        banNow.withLock {
            $0 = { _ = try? store.ban(deviceKey: device.identity, reason: "test: banned elsewhere", instanceId: [UInt8](repeating: 9, count: 32),
                                      party: party) }
        }
        await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
            _ = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message)
        }
        #expect(fixture.client.reports.contains(.failed(.partyBanned(party: .app))))
        if mode == .duo { #expect(fixture.client.reports.last == .failed(.partyBanned(party: .app))) }
        banNow.withLock { $0 = nil }

        // Later sessions are refused at SETUP; after the operator lifts the ban, signing works again.
        await #expect(throws: SilentShardError.self) { _ = try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message) }
        #expect(fixture.client.reports.last == .rejected(.banned))
        #expect(try store.liftBan(deviceKey: device.identity, operator: "test operator"))
        #expect(try verifyECDSA(try await fixture.session.signatureWithEntryNode(keyshare: keyshare, message: message), hash: message,
                                keyshare: keyshare))
    }
}
