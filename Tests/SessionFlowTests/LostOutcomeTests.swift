import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing

/// session.md §5.3: the nodes committed but the app never reads their OUTCOME (the first message carrying
/// one is garbled, as a cut would leave it). The app is in doubt, runs one reconcile at once, finds every node
/// CURRENT at the new generation, sends DONE and promotes; the key then signs with each signer.
@Suite("Session: a lost OUTCOME is reconciled forward", .serialized, .heavy, .timeLimit(.minutes(30)))
struct LostOutcomeTests {
    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func lostOutcomeIsReconciledForward(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let garbled = LockedValue(false)
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm, tamperAppReads: { _, data in
            guard !garbled.withLock({ v in v }), let frames = try? Frame.parseBundle([UInt8](data)),
                  frames.contains(where: { $0.header.kind == .outcome })
            else { return data }
            garbled.withLock { v in v = true }
            return Data([0xFF, 0x00])
        })
        let keyshare = try await fixture.session.keygen()
        #expect(garbled.withLock { v in v })
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil && record.current != nil)
        // Each mode's record of the current share (as its keygen writes it).
        let current = try #require(record.current).bytes
        switch mode {
        case .duo: #expect(current == Data(keyshare.protocolKeyshareBytes))
        case .trio: #expect(current.suffix(keyshare.serialized().count) == keyshare.serialized())
        }
        for store in fixture.stores {
            #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation))
        }
        #expect(fixture.client.reports.last == .reconciled(keyId: keyshare.keyId, outcome: nil))
        // Reconciling a settled key changes nothing and returns the current share; an unknown key is keyNotFound.
        #expect(try await fixture.session.reconcileKeyshare(keyId: keyshare.keyId) == keyshare)
        await #expect(throws: SilentShardError.keyNotFound(keyId: String(repeating: "ab", count: 32))) {
            _ = try await fixture.session.reconcileKeyshare(keyId: String(repeating: "ab", count: 32))
        }
        let message = testMessage(algorithm, "after reconcile")
        for signature in try await fixture.session.signatureWithEachSigner(keyshare: keyshare, message: message) {
            #expect(try verify(signature, message: message, keyshare: keyshare))
        }
    }
}
