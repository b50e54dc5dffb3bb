import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import trio

/// Issue 22 item 1 in process: presignatures kept through `StorageClient` (`docs/presignature-lifecycle.md`).
/// A "restarted" app is a new session over the same storage: it lists what it can still finish, and the
/// records it can never use again (old generations, expired, tampered) are deleted on the way.
@Suite("Trio presignatures kept across restarts")
struct TrioStoredPresignatureTests {
    static func presignatureRecords(_ fixture: TrioFixture) async throws -> [String] {
        fixture.storage.inner.keyIds().filter { $0.hasPrefix(KeyId.presignaturePrefix) }
    }

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func listedAfterRestartAndFinishedOnce(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try TrioFixture(algorithm: algorithm)
        let keyshare = try await fixture.session.keygen()
        var made: [PreSignature] = []
        for (path, signer) in [("m", TrioSigner.nodeA), ("m/1/2", .nodeB), ("m", .nodeB)] {
            made.append(try await fixture.session.preSignature(keyshare: keyshare, chainPath: path, signer: signer,
                                                               ttl: UInt32(3600 * (made.count + 1))))
        }
        let restarted = fixture.session(algorithm, storage: fixture.storage)
        let listed = try await restarted.preSignatures(keyshare: keyshare)
        #expect(listed.map(\.id) == made.map(\.id), "soonest to expire first")
        for (original, copy) in zip(made, listed) {
            #expect(copy.keyId == original.keyId && copy.generation == original.generation && copy.signer == original.signer)
            #expect(copy.chainPath == original.chainPath && copy.derivedPublicKey == original.derivedPublicKey)
            #expect(abs(copy.expiresAt.timeIntervalSince(original.expiresAt)) < 0.001)
            #expect(copy.pendingMessage == nil && !copy.isConsumed)
        }
        for presignature in listed where presignature.chainPath == "m" {
            let message = testMessage(algorithm, "restarted \(presignature.signer)")
            let signature = try await restarted.preSignatureFinal(preSignature: presignature, message: message)
            #expect(try verify(signature, message: message, keyshare: keyshare))
            #expect(presignature.isConsumed && presignature.secrets == nil)
            // The copy from before the restart is the same presignature: used.
            let original = try #require(made.first { $0.id == presignature.id })
            await #expect(throws: SilentShardError.presignatureConsumed) {
                _ = try await fixture.session.preSignatureFinal(preSignature: original, message: testMessage(algorithm, "again"))
            }
            // The same message gets the same signature (from the finished record).
            let again = try await fixture.session.preSignatureFinal(preSignature: original, message: message)
            #expect(again.rawRepresentation == signature.rawRepresentation)
        }
        let left = try await restarted.preSignatures(keyshare: keyshare)
        #expect(left.map(\.chainPath) == ["m/1/2"])
        // Derived path: verifies under P′.
        let message = testMessage(algorithm, "derived")
        let derivedPresignature = try #require(left.first)
        let derived = try await restarted.preSignatureFinal(preSignature: derivedPresignature, message: message)
        #expect(Signature.fromRecord(derived.recordBytes, algorithm: algorithm, key: [UInt8](derivedPresignature.derivedPublicKey),
                                     message: [UInt8](message)) != nil)
        #expect(derivedPresignature.derivedPublicKey != keyshare.publicKey)
        #expect(try await restarted.preSignatures(keyshare: keyshare).isEmpty)
        #expect(try fixture.storeA.presignatureCount(keyId: keyshare.keyId) == 0)
        #expect(try fixture.storeB.presignatureCount(keyId: keyshare.keyId) == 0)
    }

    @Test func refreshDropsTheOldGenerationsRecords() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let first = try await fixture.session.preSignature(keyshare: keyshare)
        _ = try await fixture.session.preSignature(keyshare: keyshare, signer: .nodeB)
        #expect(try await Self.presignatureRecords(fixture).count == 3, "two records and the key's index")
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(try await Self.presignatureRecords(fixture).isEmpty, "deleted at the promote")
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await fixture.session.preSignatureFinal(preSignature: first, message: testMessage(.ecdsa, "old"))
        }
        // The old keyshare cannot list; the new one has none yet, then its own.
        await #expect(throws: SilentShardError.staleKeyshare) { _ = try await fixture.session.preSignatures(keyshare: keyshare) }
        #expect(try await fixture.session.preSignatures(keyshare: refreshed).isEmpty)
        let fresh = try await fixture.session.preSignature(keyshare: refreshed)
        #expect(try await fixture.session.preSignatures(keyshare: refreshed).map(\.id) == [fresh.id])
    }

    @Test func expiredRecordsAndOldTombstonesAreDeleted() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let used = try await fixture.session.preSignature(keyshare: keyshare, ttl: 7200)
        _ = try await fixture.session.preSignatureFinal(preSignature: used, message: testMessage(.ecdsa, "used"))
        _ = try await fixture.session.preSignature(keyshare: keyshare, ttl: 3600)
        #expect(try await fixture.session.preSignatures(keyshare: keyshare).count == 1)
        // Within the app's 60 s margin: unusable, deleted; the finished one's tombstone stays.
        fixture.clock.advance(seconds: 3600 - 30)
        #expect(try await fixture.session.preSignatures(keyshare: keyshare).isEmpty)
        #expect(try await Self.presignatureRecords(fixture).count == 2, "the tombstone and the index")
        // 24 h after its expiry the tombstone goes too, and with it the index.
        fixture.clock.advance(seconds: 7200 + 24 * 3600)
        #expect(try await fixture.session.preSignatures(keyshare: keyshare).isEmpty)
        #expect(try await Self.presignatureRecords(fixture).isEmpty)
    }

    @Test func tamperedOrMissingRecordsAreDroppedNotUsed() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let sealed = try await fixture.session.preSignature(keyshare: keyshare)
        let header = try await fixture.session.preSignature(keyshare: keyshare)
        let missing = try await fixture.session.preSignature(keyshare: keyshare)
        let kept = try await fixture.session.preSignature(keyshare: keyshare)
        func rewrite(_ presignature: PreSignature, _ change: (inout [UInt8]) -> Void) async throws {
            let stored = try #require(try await fixture.storage.read(keyId: presignature.recordKeyId))
            var bytes = [UInt8](try #require(stored.current).bytes)
            change(&bytes)
            try await fixture.storage.write(KeyshareRecord(keyId: presignature.recordKeyId,
                                                           current: StoredShare(kind: .sdkRecord, bytes: bytes)))
        }
        try await rewrite(sealed) { $0[$0.count - 20] ^= 1 }           // the ciphertext
        try await rewrite(header) { $0[$0.count - 200] ^= 1 }          // inside the sealed part's AD (the header) or the secrets
        try await fixture.storage.delete(keyId: missing.recordKeyId)   // a crash between the index and the record
        let listed = try await fixture.session.preSignatures(keyshare: keyshare)
        #expect(listed.map(\.id) == [kept.id])
        #expect(try await fixture.storage.read(keyId: sealed.recordKeyId) == nil)
        #expect(try await fixture.storage.read(keyId: header.recordKeyId) == nil)
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await fixture.session.preSignatureFinal(preSignature: sealed, message: testMessage(.ecdsa, "tampered"))
        }
        #expect(try await Self.presignatureRecords(fixture).count == 2, "the kept record and the index")
    }

    /// A tombstone that cannot be written: nothing is sent, the presignature stays usable.
    @Test func failedTombstoneWriteLeavesItUnused() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let presignature = try await fixture.session.preSignature(keyshare: keyshare)
        fixture.storage.failWrites.withLock { $0 = true }
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.preSignatureFinal(preSignature: presignature, message: testMessage(.ecdsa, "full disk"))
        }
        fixture.storage.failWrites.withLock { $0 = false }
        #expect(!presignature.isConsumed)
        #expect(try fixture.storeA.presignatureCount(keyId: keyshare.keyId) == 1, "nothing was sent")
        let message = testMessage(.ecdsa, "disk freed")
        let signature = try await fixture.session.preSignatureFinal(preSignature: presignature, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }

    /// Two copies of one presignature (listed twice) finished at once on two messages: one signature;
    /// the other call is refused at the app, before anything is sent.
    @Test func twoCopiesFinishOnce() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        _ = try await fixture.session.preSignature(keyshare: keyshare)
        let first = try #require(try await fixture.session.preSignatures(keyshare: keyshare).first)
        let second = try #require(try await fixture.session(.ecdsa, storage: fixture.storage).preSignatures(keyshare: keyshare).first)
        #expect(first !== second && first.id == second.id)
        func finish(_ presignature: PreSignature, _ text: String) async -> Result<Signature, SilentShardError> {
            do throws(SilentShardError) {
                return .success(try await fixture.session.preSignatureFinal(preSignature: presignature,
                                                                            message: testMessage(.ecdsa, text)))
            } catch { return .failure(error) }
        }
        async let one = finish(first, "one")
        async let two = finish(second, "two")
        let outcomes = await [one, two]
        #expect(outcomes.filter { (try? $0.get()) != nil }.count == 1)
        #expect(outcomes.contains { if case .failure(.presignatureConsumed) = $0 { true } else { false } })
    }
}
