import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import trio

/// Issue 22 item 2: the sink is offered every new generation (keygen, refresh; trio also recover and hard
/// derivation) after the nodes committed it and while it is staged, before the previous one is discarded;
/// `backupState` follows; a stale backup is refused on restore.
@Suite("Backups that know their generation", .heavy, .timeLimit(.minutes(30)))
struct BackupLifecycleTests {
    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func theSinkGetsEveryGenerationBeforeThePreviousIsDiscarded(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let sink = RecordingBackupSink(storage: fixture.storage)
        fixture.session.backupSink = sink
        let keyshare = try await fixture.session.keygen()
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)

        #expect(sink.offers.map(\.keyshare.generation) == [keyshare.generation, refreshed.generation])
        // Offered while the new generation was staged and the old one still current.
        let offered = sink.offers[1]
        let stagedAtOffer = try #require(offered.record?.staged), currentAtOffer = try #require(offered.record?.current)
        #expect(try AppStoredShare.decode(stagedAtOffer, mode: mode).keyshare.generation == refreshed.generation)
        #expect(try AppStoredShare.decode(currentAtOffer, mode: mode).keyshare.generation == keyshare.generation)
        // The sink's blob restores the current share, and it signs.
        let restored = try KeyshareBackup.openKeyshare(offered.blob, password: RecordingBackupSink.password)
        #expect(restored == refreshed)
        let message = algorithm == .ecdsa ? Data(SHA256.hash(Array("backed up".utf8))) : Data("backed up".utf8)
        let signature = try await fixture.session.signature(keyshare: restored, message: message)
        #expect(try verifies(signature, message: message, keyshare: refreshed))
    }

    @Test(arguments: Keyshare.Mode.allCases)
    func aFailingSinkStillCommitsAndTheStateSaysStale(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .none)
        let sink = RecordingBackupSink(storage: fixture.storage)
        fixture.session.backupSink = sink
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
        sink.failing.withLock { $0 = true }
        let again = try await fixture.session.keyRefresh(keyshare: refreshed)
        // The refresh committed at the node and at the app; the state names the backup's generation.
        for store in fixture.stores { #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](again.generation)) }
        let record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        #expect(record.staged == nil)
        #expect(try AppStoredShare.decode(try #require(record.current), mode: mode).keyshare.generation == again.generation)
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .stale(since: refreshed.generation))
        await #expect(throws: SilentShardError.keyNotFound(keyId: "00")) { _ = try await fixture.session.backupState(keyId: "00") }
    }

    @Test(arguments: Keyshare.Mode.allCases)
    func aStaleBackupIsRefusedOnRestoreAndChangesNothing(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let stored = LockedValue<Data?>(nil)
        try await fixture.session.backup(keyshare: keyshare, password: "pw", limits: RecordingBackupSink.limits) { blob in
            stored.withLock { $0 = blob }
        }
        let blob = try #require(stored.withLock { $0 })
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .stale(since: keyshare.generation))

        let old = try KeyshareBackup.openKeyshare(blob, password: "pw")
        let before = try await fixture.storage.read(keyId: keyshare.keyId)
        await #expect(throws: SilentShardError.staleBackup(keyId: keyshare.keyId, generation: keyshare.generation)) {
            _ = try await fixture.session.restoreBackup(old)
        }
        #expect(try await fixture.storage.read(keyId: keyshare.keyId) == before)

        // The app's data is gone (same device key, e.g. kept in the keychain): the node decides.
        let wiped = InMemoryStorageClient()
        let fresh = fixture.session(.ecdsa, signer: fixture.signer, storage: wiped)
        await #expect(throws: SilentShardError.staleBackup(keyId: keyshare.keyId, generation: keyshare.generation)) {
            _ = try await fresh.restoreBackup(old)
        }
        #expect(try await wiped.read(keyId: keyshare.keyId) == nil, "a refused restore leaves no record behind")
        let current = try await fresh.restoreBackup(refreshed)
        #expect(current == refreshed)
        #expect(try await fresh.backupState(keyId: keyshare.keyId) == .current)
        let hash = Data(SHA256.hash(Array("restored".utf8)))
        #expect(try verifies(try await fresh.signature(keyshare: current, message: hash), message: hash, keyshare: refreshed))
        // Restoring what is already current is a no-op that returns it.
        #expect(try await fixture.session.restoreBackup(refreshed) == refreshed)
    }

    /// Review finding: the app's record, not the backup, may be the stale one (storage restored from an
    /// older device backup). The nodes decide: the current backup replaces the stale record; a stale
    /// backup is refused and the record is left as it was.
    @Test(arguments: Keyshare.Mode.allCases)
    func theNodesDecideWhetherTheRecordOrTheBackupIsStale(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .eddsa)
        let first = try await fixture.session.keygen()
        let olderRecord = try #require(try await fixture.storage.read(keyId: first.keyId))
        let current = try await fixture.session.keyRefresh(keyshare: first)
        try await fixture.storage.write(olderRecord)   // the device's storage went back in time

        await #expect(throws: SilentShardError.staleBackup(keyId: first.keyId, generation: first.generation)) {
            _ = try await fixture.session.restoreBackup(first)
        }
        #expect(try await fixture.storage.read(keyId: first.keyId) == olderRecord, "a refused restore leaves the record")

        #expect(try await fixture.session.restoreBackup(current) == current)
        let record = try #require(try await fixture.storage.read(keyId: first.keyId))
        #expect(try AppStoredShare.decode(try #require(record.current), mode: mode).keyshare.generation == current.generation)
        #expect(try await fixture.session.backupState(keyId: first.keyId) == .current)
    }

    @Test(arguments: Keyshare.Mode.allCases)
    func aBackupIsRecordedOnlyOnceStoredAndOnlyOfTheCurrentShare(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .eddsa)
        let keyshare = try await fixture.session.keygen()
        struct Offline: Error {}
        await #expect(throws: SilentShardError.self) {
            try await fixture.session.backup(keyshare: keyshare, password: "pw", limits: RecordingBackupSink.limits) { _ in throw Offline() }
        }
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .none)
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        await #expect(throws: SilentShardError.staleKeyshare) {
            try await fixture.session.backup(keyshare: keyshare, password: "pw", limits: RecordingBackupSink.limits) { _ in }
        }
        try await fixture.session.backup(keyshare: refreshed, password: "pw", limits: RecordingBackupSink.limits) { _ in }
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
        // While a share is staged (in doubt), the state is not known to be current.
        var record = try #require(try await fixture.storage.read(keyId: keyshare.keyId))
        record.staged = record.current
        try await fixture.storage.write(record)
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .stale(since: refreshed.generation))
    }

    @Test(arguments: Keyshare.Mode.allCases)
    func aReconcileThatPromotesOffersTheStagedGeneration(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .eddsa)
        let keyshare = try await fixture.session.keygen()
        let sink = RecordingBackupSink(storage: fixture.storage)
        fixture.session.backupSink = sink
        // The app's promote write fails once: the refresh is in doubt, and the automatic reconcile promotes.
        fixture.storage.failPromotes.withLock { $0 = 1 }
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(sink.offers.count == 2, "offered in the commit and again in the reconcile that promoted")
        #expect(sink.offers.allSatisfy { $0.keyshare.generation == refreshed.generation })
        #expect(try await fixture.session.backupState(keyId: keyshare.keyId) == .current)
    }

    /// Trio: recover and hard derivation offer their generation too.
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

    func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        switch keyshare.algorithm {
        case .ecdsa: return try verifyECDSA(signature, hash: message, keyshare: keyshare)
        case .eddsa:
            let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
            return key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message))
        }
    }
}
