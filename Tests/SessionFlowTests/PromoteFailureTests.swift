import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing

/// Issue 10: the app's storage fails the write that promotes a staged share after the node(s) committed.
/// Twice (the operation's own immediate reconcile fails the same way): the operation reports
/// `reconcileRequired`, the share stays staged, and an explicit `reconcileKeyshare` promotes it —
/// nothing is lost. Once: the operation's own reconcile repairs it and the caller sees success.
@Suite("Faults: the app's promote write failing", .heavy, .timeLimit(.minutes(30)))
struct PromoteFailureTests {
    @Test(arguments: Keyshare.Mode.allCases, [(Keyshare.Algorithm.ecdsa, 1), (.ecdsa, 2), (.eddsa, 1), (.eddsa, 2)])
    func promoteWriteFails(mode: Keyshare.Mode, run: (Keyshare.Algorithm, Int)) async throws {
        let (algorithm, failures) = run
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
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
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation))
        }
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil && record.current != nil)
        let message = testMessage(algorithm, "promote")
        for signature in try await fixture.session.signatureWithEachSigner(keyshare: settled, message: message) {
            #expect(try verify(signature, message: message, keyshare: settled))
        }
        _ = try await fixture.session.keyRefresh(keyshare: settled)
    }
}
