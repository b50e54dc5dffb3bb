import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing
@testable import duo

/// Duo presignatures (protocol v2, issue 20), the duo-only cases: the node's PRESIG_STATUS after a ban and
/// a refresh, and a status signed by another key. Presign, finish once across a restart and concurrent copies
/// in both modes: `PresignatureRestartTests`.
@Suite("Duo presignatures", .timeLimit(.minutes(30)))
struct DuoPresignatureTests {
    static func message(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
        algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
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
}
