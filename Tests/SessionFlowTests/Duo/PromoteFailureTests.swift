import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import duo

/// Issue 10: the app's storage fails the write that promotes a staged share after the node committed.
/// Twice (the operation's own immediate reconcile fails the same way): the operation reports
/// `reconcileRequired`, the share stays staged, and an explicit `reconcileKeyshare` promotes it —
/// nothing is lost. Once: the operation's own reconcile repairs it and the caller sees success.
@Suite("Duo faults: the app's promote write failing", .heavy, .timeLimit(.minutes(30)))
struct PromoteFailureTests {
    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa], [1, 2])
    func promoteWriteFails(algorithm: Keyshare.Algorithm, failures: Int) async throws {
        let fixture = try DuoFixture(algorithm: algorithm)
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
        #expect(try fixture.store.share(keyId: keyshare.keyId)?.gen == [UInt8](settled.generation))
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil && record.current != nil)
        let message = algorithm == .ecdsa ? Data(repeating: 0x21, count: 32) : Data("promote".utf8)
        let signature = try await fixture.session.signature(keyshare: settled, message: message)
        #expect(algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: settled)
                                    : try verifyEdDSA(signature, message: message, keyshare: settled))
        _ = try await fixture.session.keyRefresh(keyshare: settled)
    }
}
