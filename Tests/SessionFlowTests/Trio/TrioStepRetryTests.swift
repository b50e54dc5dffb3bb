import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Issue 18, step 2: the trio versions of the duo suites `ClockSkewTests`, `KeyLeaseTests` and
/// `PromoteFailureTests` (the replay one is `TrioDurableReplayTests`), written before the engine
/// merge. Trio had neither the per-key lease at its nodes nor the app's clock correction.
@Suite("Trio: clock skew, per-key lease, promote failure (the duo suites' trio versions)", .heavy, .timeLimit(.minutes(30)))
struct TrioStepRetryTests {
    /// session.md §5.3/§9.6: the app's device clock outside the nodes' ±120 s window. Node A's REJECT(STALE_TIMESTAMP)
    /// is signed (A's certified key) and bound to the SETUP: the app retries once with A's time and keeps
    /// the correction.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], [Int64(-3_600_000), 600_000])
    func skewedDeviceClock(algorithm: Keyshare.Algorithm, nodesAheadBy milliseconds: Int64) async throws {
        let fixture = try TrioFixture(algorithm: algorithm, nodesAheadBy: milliseconds)
        let keyshare = try await fixture.session.keygen()
        #expect(fixture.client.reports.first == .rejected(.staleTimestamp))
        let message = testMessage(algorithm, "trio skew")
        for signer in [TrioSigner.nodeA, .nodeB] {
            let signature = try await fixture.session.signature(keyshare: keyshare, message: message, signer: signer)
            #expect(try verify(signature, message: message, keyshare: keyshare))
        }
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation)
        // The correction stays: one STALE_TIMESTAMP in all.
        #expect(fixture.client.reports.filter { $0 == .rejected(.staleTimestamp) }.count == 1)
    }

    /// session.md §7.2: one share-changing session per key at each node. A refresh meeting another session's lease —
    /// at A or at B — is KEY_BUSY and changes nothing anywhere; signing runs beside it; once the lease
    /// is gone the refresh goes through (and releases its own leases).
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], ["A", "B"])
    func refreshMeetingALeaseIsKeyBusy(algorithm: Keyshare.Algorithm, leasedAt node: String) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        let store = node == "A" ? fixture.storeA : fixture.storeB
        let otherSession = [UInt8](repeating: 0xAB, count: 32)
        try store.acquireLease(keyId: keyshare.keyId, holder: otherSession, seconds: 60)

        await #expect(throws: SilentShardError.keyBusy) { _ = try await fixture.session.keyRefresh(keyshare: keyshare) }
        for nodeStore in [fixture.storeA, fixture.storeB] {
            #expect(try nodeStore.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
            #expect(try nodeStore.status(keyId: keyshare.keyId).preparedGen == nil, "nothing prepared at either node")
        }
        #expect(try await fixture.storage.read(keyId: keyshare.keyId)?.staged == nil)

        let message = testMessage(algorithm, "beside a lease")
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message, signer: .nodeB)
        #expect(try verify(signature, message: message, keyshare: keyshare))

        try store.releaseLease(keyId: keyshare.keyId, holder: otherSession)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(refreshed.generation != keyshare.generation)
        _ = try await fixture.session.keyRefresh(keyshare: refreshed)
    }

    /// The app's storage fails the write that promotes a staged share after both nodes committed. Twice:
    /// the refresh reports `reconcileRequired`, the share stays staged, `reconcileKeyshare` promotes it.
    /// Once: the refresh's own reconcile repairs it.
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], [1, 2])
    func promoteWriteFails(algorithm: Keyshare.Algorithm, failures: Int) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        fixture.storage.failPromotes.withLock { $0 = failures }
        var refreshed: Keyshare?
        do {
            refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
            #expect(failures == 1, "the refresh succeeded although every promote failed")
        } catch {
            #expect(failures == 2 && error == .reconcileRequired(keyId: keyshare.keyId), "\(error)")
            let staged = try #require(try await fixture.storage.read(keyId: keyshare.keyId)?.staged, "the share stays staged")
            #expect(!staged.bytes.isEmpty)
            refreshed = try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId)
        }
        #expect(fixture.storage.failPromotes.withLock { $0 } == 0, "every planned failure happened")
        let settled = try #require(refreshed)
        #expect(settled.generation != keyshare.generation, "the committed refresh was kept")
        for store in [fixture.storeA, fixture.storeB] {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation))
        }
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil && record.current != nil)
        let message = testMessage(algorithm, "promote")
        let signature = try await fixture.session.signature(keyshare: settled, message: message, signer: .nodeB)
        #expect(try verify(signature, message: message, keyshare: settled))
        _ = try await fixture.session.keyRefresh(keyshare: settled)
    }
}
