import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// session.md §9.4 in trio: a party whose own consistency check catches another party bans it. A cheater is made
/// from an honest keyshare whose pairwise OT state with node A is corrupted, so its protocol messages
/// are validly signed and encrypted but wrong (a party misbehaving with its own keys, not a network
/// attacker), and the check that fails is the protocol's own, in the party that receives them.
@Suite("Trio bans after AbortAndBan", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioBanTests {
    static var message: Data { Data(SHA256.hash(Array("trio ban".utf8))) }

    /// DKLs23 keyshare layout (dkls23.md §11, keyshare version 2), app = party 0 of 3: 230 header bytes,
    /// 98 per party, then per peer (ascending; peer 1 first): zero seed (32), SoftSpokenOT receiver GGM
    /// roots (64 × 32), sender Δ (32) and punctured-tree co-paths (256 × 32).
    static let peer1Block = 230 + 98 * 3
    static let peer1ReceiverRoots = peer1Block + 32
    static let peer1SenderCoPath = peer1ReceiverRoots + 64 * 32 + 32

    /// The app keyshare with the first byte of `count` 32-byte seeds from `offset` on flipped.
    static func corrupted(_ keyshare: Keyshare, seedsAt offset: Int, count: Int) throws -> Keyshare {
        var bytes = keyshare.protocolKeyshareBytes
        for k in 0..<count { bytes[offset + 32 * k] ^= 0x01 }
        return try Keyshare(algorithm: .ecdsa, mode: .trio, protocolBytes: bytes, groupId: keyshare.groupId.map { [UInt8]($0) })
    }

    @Test func nodeBansAnAppThatFailsItsOTCheck() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        // The app's OT-extension receiver roots toward A are wrong: A (the sender) finds û inconsistent.
        let cheating = try Self.corrupted(keyshare, seedsAt: Self.peer1ReceiverRoots, count: 64)
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: cheating, message: Self.message, signer: .nodeA)
        }
        #expect(fixture.client.reports.last == .failed(.abortProtocolAndBanParty(party: .app)))
        #expect(try fixture.storeA.isBanned(deviceKey: device.identity))
        #expect(try !fixture.storeB.isBanned(deviceKey: device.identity))

        // Refused by A with either co-signer (A also refuses to relay for it), and for refresh: the device is
        // banned by A (`deviceBanned`, P4), which is not the app's own ban of A, so the default signer does not
        // fall back to B (that would be one more refused round trip through A).
        for signer in [TrioSigner.nodeA, .nodeB] {
            await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
                _ = try await fixture.session.signature(keyshare: keyshare, message: Self.message, signer: signer)
            }
        }
        let reportsBefore = fixture.client.reports.count
        await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Self.message)
        }
        #expect(fixture.client.reports.count == reportsBefore + 1, "no fallback to B")
        await #expect(throws: SilentShardError.deviceBanned(by: .node(1))) {
            _ = try await fixture.session.keyRefresh(keyshare: keyshare)
        }
        // Reconcile still runs (session.md §9.4) and changes nothing.
        let reconciled = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation)

        // The operator lifts the ban: A signs again.
        #expect(try fixture.storeA.liftBan(deviceKey: device.identity, operator: "test operator"))
        let signature = try await fixture.session.signature(keyshare: keyshare, message: Self.message, signer: .nodeA)
        #expect(try verifyECDSA(signature, hash: Self.message, keyshare: keyshare))
    }

    @Test func appBansANodeWhoseMessagesFailItsOTCheck() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        // The app's OT-extension sender state toward A is wrong, so A's (honest) û fails the app's check: to the
        // app, A cheated. It aborts with AbortAndBan(A) and records the ban on A's node key.
        let skewed = try Self.corrupted(keyshare, seedsAt: Self.peer1SenderCoPath, count: 256)
        await #expect(throws: SilentShardError.abortProtocolAndBanParty(party: .node(1))) {
            _ = try await fixture.session.signature(keyshare: skewed, message: Self.message, signer: .nodeA)
        }
        let banId = KeyId.banPrefix + Hex.encode(fixture.runnerA.party.nodeKey.verifyingKey.bytes)
        #expect(try await fixture.storage.read(keyId: banId)?.current?.kind == .sdkRecord)
        // Nodes never ban on another party's ABORT.
        let device = try DeviceKey(signer: fixture.signer)
        #expect(try !fixture.storeA.isBanned(deviceKey: device.identity))

        // Signing with A is refused after A's ACCEPT, before any protocol message; the default picks B.
        let reportsBefore = fixture.client.reports.count
        await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: Self.message, signer: .nodeA)
        }
        let viaB = try await fixture.session.signature(keyshare: keyshare, message: Self.message)
        #expect(try verifyECDSA(viaB, hash: Self.message, keyshare: keyshare))
        #expect(fixture.client.reports.count == reportsBefore + 3)
        // Share changes need A: refused. Reconcile and export still work (export lets the user move funds).
        await #expect(throws: SilentShardError.partyBanned(party: .node(1))) {
            _ = try await fixture.session.keyRefresh(keyshare: keyshare)
        }
        let reconciled = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        #expect(reconciled.generation == keyshare.generation)

        // Deleting the record lifts the ban.
        try await fixture.storage.delete(keyId: banId)
        let viaA = try await fixture.session.signature(keyshare: keyshare, message: Self.message, signer: .nodeA)
        #expect(try verifyECDSA(viaA, hash: Self.message, keyshare: keyshare))
    }
}
