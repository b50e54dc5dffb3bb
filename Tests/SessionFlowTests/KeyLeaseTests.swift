import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// session.md §7.2: one share-changing session per key at each node. A refresh that meets another session's lease —
/// at duo's node, at trio's A or B — is refused with `keyBusy` and changes nothing anywhere; signing is not
/// affected; once the lease is gone the refresh goes through (and releases its own leases).
@Suite("Node runner: per-key lease", .heavy, .timeLimit(.minutes(30)))
struct KeyLeaseTests {
    /// (mode, algorithm, the node holding the other lease: 0 = the entry node, 1 = trio's B).
    static let cases: [(Keyshare.Mode, Keyshare.Algorithm, Int)] =
        Keyshare.Mode.allCases.flatMap { mode in
            [Keyshare.Algorithm.ecdsa, .eddsa].flatMap { a in (mode == .duo ? [0] : [0, 1]).map { (mode, a, $0) } }
        }

    @Test(arguments: cases)
    func refreshMeetingALeaseIsKeyBusy(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, leasedAt node: Int) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        let store = fixture.stores[node]
        let otherSession = [UInt8](repeating: 0xAB, count: 32)
        try store.acquireLease(keyId: keyshare.keyId, holder: otherSession, seconds: 60)

        await #expect(throws: SilentShardError.keyBusy) { _ = try await fixture.session.keyRefresh(keyshare: keyshare) }
        for nodeStore in fixture.stores {
            #expect(try nodeStore.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
            if mode == .trio {
                #expect(try nodeStore.status(keyId: keyshare.keyId).preparedGen == nil, "nothing prepared at either node")
            }
        }
        #expect(try await fixture.storage.read(keyId: keyshare.keyId)?.staged == nil)

        // Signing runs beside a lease (trio: with A and with B).
        let message = testMessage(algorithm, "beside a lease")
        for signature in try await fixture.session.signatureWithEachSigner(keyshare: keyshare, message: message) {
            #expect(try verify(signature, message: message, keyshare: keyshare))
        }

        // Once the other session ends, the refresh goes through and releases its own lease.
        try store.releaseLease(keyId: keyshare.keyId, holder: otherSession)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation)
        _ = try await fixture.session.keyRefresh(keyshare: refreshed)
    }
}
