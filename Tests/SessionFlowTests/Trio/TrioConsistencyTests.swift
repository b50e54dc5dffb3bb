import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import Synchronization
import SilentShardTestTraits
import Testing
import trio

/// One corrupted byte anywhere in a keygen's traffic (on the link A → B or B → A, or in what the app
/// reads through A) must never leave the parties inconsistent (session.md §7.2 "Consequences"): whatever the
/// outcome, a generation CURRENT at one node is held (CURRENT or PREPARED) by the other, and a
/// generation current at the app is CURRENT at both nodes.
@Suite("Trio consistency under single-byte corruption", .serialized, .heavy, .timeLimit(.minutes(30)))
struct TrioConsistencyTests {
    enum Path: Sendable, CaseIterable { case linkAToB, linkBToA, appReads }

    @Test(arguments: Path.allCases, Array(0..<10))
    func oneFlippedByteNeverSplitsTheParties(path: Path, messageIndex: Int) async throws {
        // A fixed position per case (reproducible), somewhere in the message.
        let flip: @Sendable (Int, Data) -> Data = { index, data in
            guard index == messageIndex, !data.isEmpty else { return data }
            var bytes = [UInt8](data)
            let position = (messageIndex * 7919 + 13) % bytes.count
            bytes[position] ^= 0x40
            return Data(bytes)
        }
        let identity: @Sendable (Int, Data) -> Data = { _, data in data }
        let appTamper = path == .appReads ? flip : identity
        let linkTamper = path == .linkAToB ? flip : identity
        let backTamper = path == .linkBToA ? flip : identity
        let fixture = try TrioFixture(algorithm: .eddsa, tamperAppReads: appTamper, tamperToB: linkTamper, tamperToA: backTamper,
                                      frameTimeout: .seconds(3))
        let outcome = await failure { () throws(SilentShardError) in _ = try await fixture.session.keygen() }
        _ = await fixture.peer.reports()
        var keyIds = Set(fixture.storage.writes.map { (record: KeyshareRecord) in record.keyId })
        for store in [fixture.storeA, fixture.storeB] {
            for entry in try store.auditLog() { if let keyId = entry.keyId { keyIds.insert(keyId) } }
        }
        if outcome == nil { #expect(!keyIds.isEmpty) }
        for keyId in keyIds {
            let statusA = try fixture.storeA.status(keyId: keyId), statusB = try fixture.storeB.status(keyId: keyId)
            func holds(_ status: NodeKeyStatus, _ gen: [UInt8]) -> Bool { status.currentGen == gen || status.preparedGen == gen }
            if let gen = statusA.currentGen { #expect(holds(statusB, gen), "A committed a generation B does not hold") }
            if let gen = statusB.currentGen { #expect(holds(statusA, gen), "B committed a generation A does not hold") }
            if let record = try await fixture.storage.read(keyId: keyId), let current = record.current {
                let keyshare = try Keyshare(serialized: Data([UInt8](current.bytes).dropFirst(36)))
                let gen = [UInt8](keyshare.generation)
                #expect(statusA.currentGen == gen && statusB.currentGen == gen, "the app promoted what a node did not commit")
            }
        }
    }
}
