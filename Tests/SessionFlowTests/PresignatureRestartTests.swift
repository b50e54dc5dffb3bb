import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
import trio

/// Presignatures kept through `StorageClient` in both modes (`docs/presignature-lifecycle.md`): a "restarted"
/// app is a new session over the same storage. It lists what it can still finish, each presignature is
/// finished once at the app (whichever copy finishes it) and at the node, and the ledger shows that no
/// presignature was ever sent two different requests. The mode-only cases are in `Duo/DuoPresignatureTests`
/// and `Trio/TrioStoredPresignatureTests`.
@Suite("Presignatures across an app restart (both modes)", .timeLimit(.minutes(30)))
struct PresignatureRestartTests {
    /// What each mode presigns: (path, signer), soonest to expire first. Duo: its node at the root and at a
    /// soft path; trio: A at the root, B at a soft path and at the root.
    static func plan(_ mode: Keyshare.Mode) -> [(path: String, signer: TrioSigner?)] {
        switch mode {
        case .duo: [("m", nil), ("m/1/2", nil)]
        case .trio: [("m", .nodeA), ("m/1/2", .nodeB), ("m", .nodeB)]
        }
    }

    /// Presign per `plan` (lifetimes 1 h, 2 h, 3 h); the restarted app lists every one, equal to the
    /// original but for the secrets' owner; the first root presignature is finished by the session that made
    /// it, the other root ones by the restarted session; each copy then refuses another message
    /// (`presignatureConsumed`) and answers the same message with the same signature (the finished record);
    /// the soft-path one, finished after the restart, verifies under P′; nothing is left at the app or the nodes.
    @Test(arguments: [Keyshare.Mode.duo, .trio], [Keyshare.Algorithm.ecdsa, .eddsa])
    func presignThenFinishOnceAcrossARestart(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        let ledger = FinalRequestLedger()
        let client = LedgerRecordingClient(inner: fixture.client, ledger: ledger)
        let session = fixture.session(algorithm, signer: fixture.signer, storage: fixture.storage, client: client)
        let keyshare = try await session.keygen()
        var made: [PreSignature] = []
        for (path, signer) in Self.plan(mode) {
            made.append(try await session.preSignature(keyshare: keyshare, chainPath: path, signer: signer,
                                                       ttl: UInt32(3600 * (made.count + 1))))
        }
        func heldAtNodes() throws -> Int { try fixture.stores.reduce(0) { $0 + (try $1.presignatureCount(keyId: keyshare.keyId)) } }
        #expect(try heldAtNodes() == made.count)
        for (presignature, step) in zip(made, Self.plan(mode)) {
            #expect(presignature.signerIndex == (step.signer == .nodeB ? 2 : 1) && !presignature.isConsumed)
            #expect((presignature.derivedPublicKey == keyshare.publicKey) == (step.path == "m"))
        }

        let restarted = fixture.session(algorithm, signer: fixture.signer, storage: fixture.storage, client: client)
        let listed = try await restarted.preSignatures(keyshare: keyshare)
        #expect(listed.map(\.id) == made.map(\.id), "soonest to expire first")
        for (original, copy) in zip(made, listed) {
            #expect(copy.keyId == original.keyId && copy.generation == original.generation && copy.signerIndex == original.signerIndex)
            #expect(copy.chainPath == original.chainPath && copy.derivedPublicKey == original.derivedPublicKey)
            #expect(abs(copy.expiresAt.timeIntervalSince(original.expiresAt)) < 0.001)
            #expect(copy.pendingMessage == nil && !copy.isConsumed)
        }
        var finished = 0
        for (index, copy) in listed.enumerated() where copy.chainPath == "m" {
            let original = made[index]
            // The first by the session that made it, the others by the restarted app.
            let (finisher, presignature, otherUser, other) = finished == 0 ? (session, original, restarted, copy)
                                                                           : (restarted, copy, session, original)
            let message = testMessage(algorithm, "finished \(index)")
            let signature = try await finisher.preSignatureFinal(preSignature: presignature, message: message)
            finished += 1
            #expect(try verify(signature, message: message, keyshare: keyshare))
            #expect(presignature.isConsumed && presignature.secrets == nil)
            #expect(try heldAtNodes() == made.count - finished)
            for (user, copy) in [(finisher, presignature), (otherUser, other)] {
                await #expect(throws: SilentShardError.presignatureConsumed) {
                    _ = try await user.preSignatureFinal(preSignature: copy, message: testMessage(algorithm, "another \(index)"))
                }
                #expect(try await user.preSignatureFinal(preSignature: copy, message: message).rawRepresentation
                        == signature.rawRepresentation)
            }
        }
        let left = try await restarted.preSignatures(keyshare: keyshare)
        #expect(left.map(\.chainPath) == ["m/1/2"])
        // The soft path: verifies under P′.
        let message = testMessage(algorithm, "later")
        let derivedPresignature = try #require(left.first)
        let derived = try await restarted.preSignatureFinal(preSignature: derivedPresignature, message: message)
        #expect(Signature.fromRecord(derived.recordBytes, algorithm: algorithm, key: [UInt8](derivedPresignature.derivedPublicKey),
                                     message: [UInt8](message)) != nil)
        #expect(derivedPresignature.derivedPublicKey != keyshare.publicKey)
        #expect(try await restarted.preSignatures(keyshare: keyshare).isEmpty)
        #expect(try heldAtNodes() == 0)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.count == made.count)
    }

    /// Four copies of one presignature (listed twice by the app, twice by another session over the same
    /// storage) finished at once on 20 messages: one signature; every other call is refused at the app
    /// (`presignatureConsumed`), before anything is sent — one request was ever sent for it.
    @Test(arguments: [Keyshare.Mode.duo, .trio])
    func copiesFinishedConcurrentlySignOnce(mode: Keyshare.Mode) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: .ecdsa)
        let ledger = FinalRequestLedger()
        let session = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage,
                                      client: LedgerRecordingClient(inner: fixture.client, ledger: ledger))
        let other = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage)
        let keyshare = try await session.keygen()
        _ = try await session.preSignature(keyshare: keyshare)
        var copies: [PreSignature] = []
        for lister in [session, session, other, other] {
            copies.append(try #require(try await lister.preSignatures(keyshare: keyshare).first))
        }
        #expect(Set(copies.map(\.id)).count == 1 && Set(copies.map(ObjectIdentifier.init)).count == copies.count)
        let finishing = copies
        let outcomes = await withTaskGroup(of: Result<Signature, SilentShardError>.self) { group in
            for index in 0..<20 {
                group.addTask {
                    do throws(SilentShardError) {
                        return .success(try await session.preSignatureFinal(preSignature: finishing[index % finishing.count],
                                                                            message: testMessage(.ecdsa, "concurrent \(index)")))
                    } catch { return .failure(error) }
                }
            }
            var all: [Result<Signature, SilentShardError>] = []
            for await outcome in group { all.append(outcome) }
            return all
        }
        #expect(outcomes.filter { (try? $0.get()) != nil }.count == 1)
        #expect(outcomes.filter { if case .failure(.presignatureConsumed) = $0 { true } else { false } }.count == 19)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.values.reduce(0, +) == 1)
    }
}
