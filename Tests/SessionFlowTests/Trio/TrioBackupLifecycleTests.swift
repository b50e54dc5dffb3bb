import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio

/// Issue 22 item 2 in trio: the sink is offered the new generation of keygen, refresh, recover and hard
/// derivation while it is staged (the previous one still current); a stale backup is refused on restore.
@Suite("Trio backups that know their generation", .timeLimit(.minutes(30)))
struct TrioBackupLifecycleTests {
    @Test func everyShareChangingOperationOffersItsGenerationBeforeThePromote() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let sink = RecordingBackupSink(storage: fixture.storage)
        fixture.session.backupSink = sink
        let keyshare = try await fixture.session.keygen()
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        let child = try await fixture.session.hardDerivation(keyshare: refreshed, path: "m/44'/0'/1")
        #expect(sink.offers.map(\.keyshare.generation) == [keyshare.generation, refreshed.generation, child.generation])
        for offer in sink.offers {
            let staged = try #require(offer.record?.staged)
            #expect(try AppStoredShare.decode(staged, mode: .trio).keyshare.generation == offer.keyshare.generation)
        }
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
        #expect(try await fixture.session.backupState(keyId: child.keyId) == .current)

        // The app lost its data but not its device key: recover offers the recovered generation too.
        let storage = RecordingStorage()
        let device = fixture.session(.ecdsa, storage: storage)
        let recoverySink = RecordingBackupSink(storage: storage)
        device.backupSink = recoverySink
        let recovered = try await device.recovery(keysharePublicKey: keyshare.publicKey)
        #expect(recoverySink.offers.map(\.keyshare.generation) == [recovered.generation])
        #expect(try await device.backupState(keyId: keyshare.keyId) == .current)
        // The first device's backups are now stale, and its sealed copy of `refreshed` is refused by the nodes.
        let old = try KeyshareBackup.openKeyshare(sink.offers[1].blob, password: RecordingBackupSink.password)
        let wiped = fixture.session(.ecdsa, storage: InMemoryStorageClient())
        await #expect(throws: SilentShardError.staleBackup(keyId: keyshare.keyId, generation: refreshed.generation)) {
            _ = try await wiped.restoreBackup(old)
        }
        let message = testMessage(.ecdsa, "recovered and backed up")
        let restored = try KeyshareBackup.openKeyshare(recoverySink.offers[0].blob, password: RecordingBackupSink.password)
        let current = try await wiped.restoreBackup(restored)
        #expect(current == recovered)
        let signature = try await wiped.signature(keyshare: current, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: recovered))
    }
}
