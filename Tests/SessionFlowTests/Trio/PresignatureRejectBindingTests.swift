import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Security review 2, finding 14: the app binds a preSignFinal's or a PRESIG_QUERY's REJECT to the presignature
/// or query it answers. A node's signed REJECT of another request, replayed, is a protocol violation — never
/// reported as this presignature's outcome (before: it was, e.g. `presignatureNotFound` for a presignature the
/// node still held).
@Suite("Presignature REJECTs are bound to their request", .heavy, .timeLimit(.minutes(30)))
struct PresignatureRejectBindingTests {
    @Test func finding14_replayedRejectOfAnotherPresignatureIsAProtocolViolation() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let replaying = LossyPostClient(inner: fixture.client)
        let session = fixture.session(.ecdsa, storage: fixture.storage, client: replaying)
        let keyshare = try await session.keygen()

        // A genuine, signed REJECT bound to `gone`: A dropped it (a ban, then lifted).
        let gone = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let device = [fixture.signer.keyType.rawValue] + [UInt8](fixture.signer.verifyingKey)
        _ = try fixture.storeA.ban(deviceKey: device, reason: "test", instanceId: SecureRandom.bytes(count: 32), party: "node 1")
        #expect(try fixture.storeA.liftBan(deviceKey: device, operator: "test"))
        await #expect(throws: SilentShardError.presignatureNotFound) {
            _ = try await session.preSignatureFinal(preSignature: gone, message: testMessage(.ecdsa, "gone"))
        }
        let captured = try #require(replaying.answers.withLock { $0.last })
        #expect(try Frame.parseSingle([UInt8](captured)).header.kind == .reject)

        // `held` is still held at A; its answer is replaced by the captured REJECT.
        let held = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        replaying.substitute.withLock { $0 = captured }
        let message = testMessage(.ecdsa, "held")
        await #expect(throws: SilentShardError.protocolViolation(party: .node(1))) {
            _ = try await session.preSignatureFinal(preSignature: held, message: message)
        }
        // The same REJECT answering a PRESIG_QUERY (its instance_id is not the query's): a protocol violation too,
        // and nothing is dropped.
        await #expect(throws: SilentShardError.protocolViolation(party: .node(1))) {
            _ = try await session.reconcilePreSignatures(keyshare: keyshare)
        }
        #expect(try await session.preSignatures(keyshare: keyshare).map(\.id).contains(held.id))

        // The real answers again: the finishing presignature resends its request and gets A's recorded signature.
        replaying.substitute.withLock { $0 = nil }
        let signature = try await session.preSignatureFinal(preSignature: held, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }

    /// Review of finding 14: a REJECT the app cannot authenticate (here: signed by a key nobody certified) is only a
    /// report — `rejected(authenticated: false)` — never `presignatureNotFound`, and its retry_after is ignored; and a
    /// presignature's state comes only from the node holding it (A's genuine PRESIG_NOT_FOUND for a presignature B holds,
    /// after an on-path rewrite of the request's receiver byte, is a protocol violation).
    @Test func finding14_unauthenticatedOrForeignStateRejectsAreNotOutcomes() async throws {
        let fixture = try TrioFixture(algorithm: .ecdsa)
        let replaying = LossyPostClient(inner: fixture.client)
        let session = fixture.session(.ecdsa, storage: fixture.storage, client: replaying)
        let keyshare = try await session.keygen()
        let atA = try await session.preSignature(keyshare: keyshare, signer: .nodeA)
        let atB = try await session.preSignature(keyshare: keyshare, signer: .nodeB)
        func reject(_ code: WireCode, retryAfter: UInt32 = 0, for presignature: PreSignature, key: Ed25519.SigningKey,
                    certificate: NodeCertificate?) throws -> Data {
            let id = try #require(InstanceID([UInt8](presignature.id)))
            let payload = RejectPayload(code: code, retryAfterSeconds: retryAfter, setupHash: nil, nodeKey: key.verifyingKey,
                                        certificate: certificate)
            return Data(payload.frame(sender: 1, instanceID: id, nodeSigningKey: key).encoded())
        }
        // Unsigned by any trusted key, bound to the right presignature id.
        let stranger = Ed25519.SigningKey()
        replaying.substitute.withLock { $0 = try? reject(.presigNotFound, for: atA, key: stranger, certificate: nil) }
        await #expect(throws: SilentShardError.rejected(code: WireCode.presigNotFound.rawValue, name: WireCode.presigNotFound.name,
                                                        by: .node(1), authenticated: false)) {
            _ = try await session.preSignatureFinal(preSignature: atA, message: testMessage(.ecdsa, "a"))
        }
        replaying.substitute.withLock { $0 = try? reject(.rateLimited, retryAfter: 86_400, for: atA, key: stranger, certificate: nil) }
        await #expect(throws: SilentShardError.rejected(code: WireCode.rateLimited.rawValue, name: WireCode.rateLimited.name,
                                                        by: .node(1), authenticated: false)) {
            _ = try await session.preSignatureFinal(preSignature: atA, message: testMessage(.ecdsa, "a"))
        }
        // A's own, validly certified PRESIG_NOT_FOUND answering for a presignature B holds.
        replaying.substitute.withLock {
            $0 = try? reject(.presigNotFound, for: atB, key: fixture.identityA.nodeKey, certificate: fixture.identityA.certificate)
        }
        await #expect(throws: SilentShardError.protocolViolation(party: .node(1))) {
            _ = try await session.preSignatureFinal(preSignature: atB, message: testMessage(.ecdsa, "b"))
        }
        // The real answers: both still finish.
        replaying.substitute.withLock { $0 = nil }
        let signatureA = try await session.preSignatureFinal(preSignature: atA, message: testMessage(.ecdsa, "a"))
        #expect(try verifyECDSA(signatureA, hash: testMessage(.ecdsa, "a"), keyshare: keyshare))
        let signatureB = try await session.preSignatureFinal(preSignature: atB, message: testMessage(.ecdsa, "b"))
        #expect(try verifyECDSA(signatureB, hash: testMessage(.ecdsa, "b"), keyshare: keyshare))
    }
}
