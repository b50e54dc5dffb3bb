import MPCCrypto
import SilentShardTestTraits
import Testing
@testable import MPCProtocols

/// The payload sizes of docs/protocol/frost.md §13, measured on real runs.
@Suite("FROST message sizes", .heavy)
struct FROSTMessageSizeTests {
    @Test(arguments: [(UInt8(2), UInt8(2)), (2, 3), (3, 5)])
    func sizes(t: UInt8, n: UInt8) throws {
        var rng = DeterministicRandom(seed: 200 + UInt64(n))
        let sid = FROST.randomBytes(32, using: &rng)
        var machines = try (0..<n).map { try FROST.KeyGeneration(party: $0, threshold: t, parties: n, sessionId: sid, mode: .keygen, using: &rng) }
        #expect(machines.allSatisfy { $0.round1Message.count == 32 * Int(t) + 96 })
        for i in 0..<Int(n) { for j in 0..<Int(n) where i != j { try machines[j].receiveRound1(machines[i].round1Message, from: PartyIndex(i)) } }
        let r2 = try machines.map { try $0.round2Messages() }
        #expect(r2.allSatisfy { $0.count == Int(n) - 1 && $0.values.allSatisfy { $0.count == 96 } })
        for i in 0..<Int(n) { for (j, m) in r2[i] { try machines[Int(j)].receiveRound2(m, from: PartyIndex(i)) } }
        let shares = try machines.map { try $0.finish() }
        #expect(shares.allSatisfy { $0.encoded.count == 164 + 64 * Int(n) })
        let refresh = try FROST.KeyGeneration(party: 0, threshold: t, parties: n, sessionId: sid, mode: .refresh(shares[0]), using: &rng)
        #expect(refresh.round1Message.count == 32 * (Int(t) - 1))
        let presignature = FROST.Presignature(keyshare: shares[0], using: &rng)
        #expect(presignature.round1Message.count == 64)
        #expect(FROST.Export.shareMessage(shares[0]).count == 32)
        // Repair needs t helpers besides the lost party (impossible in 2-of-2).
        if n > t {
            let helpers = Array(PartyIndex(1)...PartyIndex(t))
            let helper = try FROST.RepairHelper(keyshare: shares[1], helpers: helpers, lost: 0, using: &rng)
            #expect(helper.step1Messages.values.allSatisfy { $0.count == 32 })
            #expect(helper.step1Messages.count == Int(t) - 1)
        } else {
            #expect(throws: ProtocolError.invalidInput(.invalidParameters)) {
                try FROST.RepairHelper(keyshare: shares[1], helpers: [1], lost: 0, using: &rng)
            }
        }
    }

    /// Tags follow session.md §3.7's convention: the low byte is 01 for BCAST and 02 for P2P.
    @Test func tagsMatchDelivery() {
        let tags = FROST.MessageTag.allCases
        #expect(Set(tags.map(\.rawValue)).count == tags.count)
        for tag in tags { #expect(tag.isPointToPoint == (tag.rawValue & 0xff == 0x02)) }
    }
}
