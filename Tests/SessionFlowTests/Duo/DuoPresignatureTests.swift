import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import duo

/// Duo presignatures (protocol v2, issue 20): preSign with the node over the WebSocket, the finish as one
/// HTTP POST, single use at the app (across restarts) and at the node — the trio flow with the node as X.
/// Every signature is verified under the (derived) key; the ledger shows that no presignature was ever
/// sent two different requests.
@Suite("Duo presignatures", .timeLimit(.minutes(30)))
struct DuoPresignatureTests {
    static func message(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
        algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
    }

    @Test(arguments: [Keyshare.Algorithm.ecdsa, .eddsa])
    func presignThenFinishOnceAcrossARestart(algorithm: Keyshare.Algorithm) async throws {
        let fixture = try DuoFixture(algorithm: algorithm)
        let ledger = FinalRequestLedger()
        let client = LedgerRecordingClient(inner: fixture.client, ledger: ledger)
        let session = fixture.session(algorithm, signer: fixture.signer, storage: fixture.storage, client: client)
        let keyshare = try await session.keygen()
        let atRoot = try await session.preSignature(keyshare: keyshare)
        let derived = try await session.preSignature(keyshare: keyshare, chainPath: "m/3/4", ttl: 7200)
        #expect(try fixture.store.presignatureCount(keyId: keyshare.keyId) == 2)
        #expect(atRoot.derivedPublicKey == keyshare.publicKey && derived.derivedPublicKey != keyshare.publicKey)
        #expect(atRoot.signerIndex == 1 && !atRoot.isConsumed)

        let message = Self.message(algorithm, "tap to sign")
        let signature = try await session.preSignatureFinal(preSignature: atRoot, message: message)
        #expect(try verifyECDSAOrEdDSA(signature, message, keyshare))
        #expect(try fixture.store.presignatureCount(keyId: keyshare.keyId) == 1)
        await #expect(throws: SilentShardError.presignatureConsumed) {
            _ = try await session.preSignatureFinal(preSignature: atRoot, message: Self.message(algorithm, "another"))
        }
        #expect(try await session.preSignatureFinal(preSignature: atRoot, message: message).rawRepresentation
                == signature.rawRepresentation)

        // A restarted app (a new session over the same storage) finds the other one and finishes it.
        let restarted = fixture.session(algorithm, signer: fixture.signer, storage: fixture.storage, client: client)
        let listed = try await restarted.preSignatures(keyshare: keyshare)
        #expect(listed.map(\.id) == [derived.id] && listed.first?.chainPath == "m/3/4")
        let later = Self.message(algorithm, "later")
        let derivedSignature = try await restarted.preSignatureFinal(preSignature: try #require(listed.first), message: later)
        #expect(Signature.fromRecord(derivedSignature.recordBytes, algorithm: algorithm, key: [UInt8](derived.derivedPublicKey),
                                     message: [UInt8](later)) != nil)
        #expect(try fixture.store.presignatureCount(keyId: keyshare.keyId) == 0)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.count == 2)
    }

    /// The node reports what it holds (PRESIG_STATUS signed by the node key = the app's cloudVerifyingKey); a
    /// refresh drops the old generation's presignatures on both sides.
    @Test func nodeStatusAndRefresh() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let keyshare = try await fixture.session.keygen()
        let kept = try await fixture.session.preSignature(keyshare: keyshare)
        let banned = try await fixture.session.preSignature(keyshare: keyshare)
        _ = banned
        #expect(Set(try await fixture.session.reconcilePreSignatures(keyshare: keyshare).map(\.id)).count == 2)
        // The node loses every presignature of this device (a ban, lifted), then one more is made.
        let device = [fixture.signer.keyType.rawValue] + [UInt8](fixture.signer.verifyingKey)
        #expect(try fixture.store.ban(deviceKey: device, reason: "test", instanceId: SecureRandom.bytes(count: 32), party: "node 1") == 2)
        #expect(try fixture.store.liftBan(deviceKey: device, operator: "test"))
        let fresh = try await fixture.session.preSignature(keyshare: keyshare)
        #expect(try await fixture.session.reconcilePreSignatures(keyshare: keyshare).map(\.id) == [fresh.id])
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await fixture.session.preSignatureFinal(preSignature: kept, message: Self.message(.ecdsa, "dropped"))
        }
        let refreshed = try await fixture.session.keyRefresh(keyshare: keyshare)
        #expect(try await fixture.session.preSignatures(keyshare: refreshed).isEmpty)
        #expect(try fixture.store.presignatureCount(keyId: keyshare.keyId) == 0)
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await fixture.session.preSignatureFinal(preSignature: fresh, message: Self.message(.ecdsa, "old generation"))
        }
    }

    /// A status answer signed by another key than the cloudVerifyingKey drops nothing.
    @Test func statusFromAnotherKeyIsRefused() async throws {
        let fixture = try DuoFixture(algorithm: .eddsa)
        let keyshare = try await fixture.session.keygen()
        _ = try await fixture.session.preSignature(keyshare: keyshare)
        let impostor = NodeStepRunner(nodeKey: Ed25519.SigningKey(), store: fixture.store, replayWindow: try ReplayWindow(),
                                      clock: fixture.clock.read)
        let session = fixture.session(.eddsa, signer: fixture.signer, storage: fixture.storage,
                                      client: LoopbackClient(mode: .duo, runner: impostor))
        await #expect(throws: SilentShardError.messageAuthenticationFailed(party: .node(1))) {
            _ = try await session.reconcilePreSignatures(keyshare: keyshare)
        }
        #expect(try await fixture.session.preSignatures(keyshare: keyshare).count == 1)
    }

    /// 20 concurrent finishes of one presignature on 20 messages: one signature, one request sent.
    @Test func concurrentFinishesSendOneRequest() async throws {
        let fixture = try DuoFixture(algorithm: .ecdsa)
        let ledger = FinalRequestLedger()
        let session = fixture.session(.ecdsa, signer: fixture.signer, storage: fixture.storage,
                                      client: LedgerRecordingClient(inner: fixture.client, ledger: ledger))
        let keyshare = try await session.keygen()
        _ = try await session.preSignature(keyshare: keyshare)
        let copies = try await (0..<4).asyncMap { _ in try #require(try await session.preSignatures(keyshare: keyshare).first) }
        let outcomes = await withTaskGroup(of: Bool.self) { group in
            for index in 0..<20 {
                group.addTask {
                    (try? await session.preSignatureFinal(preSignature: copies[index % copies.count],
                                                          message: Self.message(.ecdsa, "concurrent \(index)"))) != nil
                }
            }
            var signed = 0
            for await ok in group where ok { signed += 1 }
            return signed
        }
        #expect(outcomes == 1)
        #expect(ledger.eachPresignatureHadOneRequest && ledger.distinctRequestCounts.values.reduce(0, +) == 1)
    }
}

extension Range where Bound == Int {
    func asyncMap<T>(_ transform: (Int) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for value in self { results.append(try await transform(value)) }
        return results
    }
}
