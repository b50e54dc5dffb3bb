import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import trio

/// Issue 22 item 1 in process: presignatures kept through `StorageClient` (`docs/presignature-lifecycle.md`).
/// A "restarted" app is a new session over the same storage: the records it can never use again (old
/// generations, expired, tampered) are deleted on the way. Listing and finishing once across a restart, and
/// concurrent copies, in both modes: `PresignatureRestartTests`.
@Suite("Trio presignatures kept across restarts", .timeLimit(.minutes(30)))
struct TrioStoredPresignatureTests {
    static func presignatureRecords(_ fixture: TrioFixture) async throws -> [String] {
        fixture.storage.inner.keyIds().filter { $0.hasPrefix(KeyId.presignaturePrefix) }
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
}

/// A client whose POST answers can be lost (the request reaches the node, the app never hears back), altered,
/// or replaced by recorded bytes (`substitute`: a replayed answer of another request); every answer is recorded in
/// `answers`; everything else goes to `inner`.
final class LossyPostClient: NetworkClient, @unchecked Sendable {
    let inner: any NetworkClient
    let loseAnswers = LockedValue(false)
    let alterAnswers = LockedValue(false)
    let answers = LockedValue<[Data]>([])
    let substitute = LockedValue<Data?>(nil)

    init(inner: any NetworkClient) { self.inner = inner }

    func connect(action: NetworkAction, params: String?) async throws { try await inner.connect(action: action, params: params) }
    func send(bytes: Data) async throws { try await inner.send(bytes: bytes) }
    func send(text: String) async throws { try await inner.send(text: text) }
    func read() async throws -> Data { try await inner.read() }
    func disconnect() async throws { try await inner.disconnect() }
    func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        var answer = try await inner.sendPostRequest(action: action, params: params, body: body)
        answers.withLock { $0.append(answer) }
        if let replacement = substitute.withLock({ $0 }) { return replacement }
        if loseAnswers.withLock({ $0 }) { throw NetworkError.connectionFailed(reason: "answer lost") }
        if alterAnswers.withLock({ $0 }), let last = answer.indices.last { answer[last] ^= 1 }
        return answer
    }
}

/// session.md §8.6: PRESIG_QUERY → PRESIG_STATUS. The app keeps what its nodes can still finish and drops the rest.
@Suite("Trio presignatures: the nodes report what they still hold", .timeLimit(.minutes(30)))
struct TrioPresignatureStatusTests {
    @Test func theAppKeepsWhatTheNodesCanStillFinish() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let lossy = LossyPostClient(inner: fixture.client)
        let session = fixture.session(.ecdsa, storage: fixture.storage, client: lossy)
        let keyshare = try await session.keygen()
        let heldA = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let heldB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        let rolledBack = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let answerLost = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        let deletedAtB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        _ = deletedAtB

        // rolledBack: used, then the app's storage is restored from before (a device backup): ready at the
        // app, consumed at A.
        let saved = try #require(try await fixture.storage.read(keyId: rolledBack.recordKeyId))
        _ = try await session.preSignatureFinal(preSignature: rolledBack, message: testMessage(.ecdsa, "used"))
        try await fixture.storage.write(saved)
        // answerLost: the request reached B, the answer never came back: finishing at the app, consumed at B.
        lossy.loseAnswers.withLock { $0 = true }
        let lostMessage = testMessage(.ecdsa, "answer lost")
        await #expect(throws: SilentShardError.self) {
            _ = try await session.preSignatureFinal(preSignature: answerLost, message: lostMessage)
        }
        lossy.loseAnswers.withLock { $0 = false }
        // deletedAtB: B dropped it (the device was banned there, then the ban lifted): unknown at B.
        let device = [fixture.signer.keyType.rawValue] + [UInt8](fixture.signer.verifyingKey)
        #expect(try fixture.storeB.ban(deviceKey: device, reason: "test", instanceId: SecureRandom.bytes(count: 32),
                                       party: "node 2") == 2, "heldB and deletedAtB (answerLost's row was consumed)")
        #expect(try fixture.storeB.liftBan(deviceKey: device, operator: "test"))
        // heldB went with the ban too; make a fresh one at B that stays held.
        let freshB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        #expect(try await session.preSignatures(keyshare: keyshare).count == 6)

        let kept = try await session.reconcilePreSignatures(keyshare: keyshare)
        #expect(Set(kept.map(\.id)) == Set([heldA.id, answerLost.id, freshB.id]))
        _ = heldB
        // The kept finishing one resends its request and gets the signature B recorded.
        let resumed = try #require(kept.first { $0.id == answerLost.id })
        #expect(resumed.pendingMessage == lostMessage)
        let signature = try await session.preSignatureFinal(preSignature: resumed, message: lostMessage)
        #expect(try verifyECDSA(signature, hash: lostMessage, keyshare: keyshare))
        // The dropped ones are gone for good.
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await session.preSignatureFinal(preSignature: rolledBack, message: testMessage(.ecdsa, "second message"))
        }
    }

    @Test func anAlteredAnswerDropsNothing() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa)
        let lossy = LossyPostClient(inner: fixture.client)
        let session = fixture.session(.eddsa, storage: fixture.storage, client: lossy)
        let keyshare = try await session.keygen()
        _ = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        let device = [fixture.signer.keyType.rawValue] + [UInt8](fixture.signer.verifyingKey)
        _ = try fixture.storeB.ban(deviceKey: device, reason: "test", instanceId: SecureRandom.bytes(count: 32), party: "node 2")
        lossy.alterAnswers.withLock { $0 = true }
        await #expect(throws: SilentShardError.messageAuthenticationFailed(party: .node(2))) {
            _ = try await session.reconcilePreSignatures(keyshare: keyshare)
        }
        #expect(try await session.preSignatures(keyshare: keyshare).count == 1)
        lossy.alterAnswers.withLock { $0 = false }
        #expect(try await session.reconcilePreSignatures(keyshare: keyshare).isEmpty)
    }

    /// The node side: a query for another key's presignatures, or for ids it never saw, learns nothing;
    /// a malformed query is MALFORMED.
    @Test func theNodeAnswersOnlyForTheKeyAsked() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let other = try await fixture.session.keygen()
        let presignature = try await fixture.session.preSignature(keyshare: keyshare, signer: .nodeA)
        func ask(_ key: Keyshare, _ ids: [[UInt8]]) async throws -> [PresignatureStatusPayload.State] {
            let query = PresignatureQueryPayload(keyID: key.keyID, ids: ids.compactMap { InstanceID($0) })
            let answer = try #require(await fixture.runnerA.preSignFinal(body: query.frame(signer: 1, instanceID: .random()).encoded(),
                                                                         token: nil, principal: nil))
            let frame = try Frame.parseSingle(answer)
            try #require(frame.header.kind == .presigStatus)
            return try PresignatureStatusPayload(bytes: frame.body).entries.map(\.state)
        }
        let id = [UInt8](presignature.id)
        #expect(try await ask(keyshare, [id, SecureRandom.bytes(count: 32)]) == [.held, .unknown])
        #expect(try await ask(other, [id]) == [.unknown])
        fixture.clock.advance(seconds: 25 * 3600)
        #expect(try await ask(keyshare, [id]) == [.expired])
        // An empty or duplicated list is MALFORMED.
        for bad in [PresignatureQueryPayload(keyID: keyshare.keyID, ids: []),
                    PresignatureQueryPayload(keyID: keyshare.keyID, ids: [InstanceID(id), InstanceID(id)].compactMap { $0 })] {
            let answer = try #require(await fixture.runnerA.preSignFinal(body: bad.frame(signer: 1, instanceID: .random()).encoded(),
                                                                         token: nil, principal: nil))
            let frame = try Frame.parseSingle(answer)
            let code = try RejectPayload(bytes: frame.body).code
            #expect(frame.header.kind == .reject && code == .malformed)
        }
    }
}
