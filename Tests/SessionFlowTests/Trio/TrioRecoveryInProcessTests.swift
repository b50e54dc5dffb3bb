@_spi(InProcess) import MPCProtocols
import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestTraits
import Testing
import trio

/// Recovery in process (app ↔ A ↔ B over in-memory pipes), EdDSA: A and B repair the app's share and
/// all three refresh in the same session (`docs/protocol/session.md` §6.4).
@Suite("Trio recovery in process", .heavy, .timeLimit(.minutes(30)))
struct TrioRecoveryInProcessTests {
    static func nodeShare(_ store: NodeShareStore, _ keyId: String) throws -> FROST.Keyshare {
        let share = try #require(try store.share(keyId: keyId))
        return try Keyshare(algorithm: .eddsa, mode: .trio, protocolBytes: try NodeShareBlob(bytes: share.bytes).protocolBytes)
            .frostKeyshare()
    }

    @Test func eddsaRecoverRepairsAndRefreshes() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa)
        let original = try await fixture.session.keygen()
        let oldA = try Self.nodeShare(fixture.storeA, original.keyId)

        // The app lost everything but its device key.
        let storage = RecordingStorage()
        let session = fixture.session(.eddsa, storage: storage)
        let recovered = try await session.recovery(keysharePublicKey: original.publicKey)
        #expect(recovered.keyId == original.keyId && recovered.publicKey == original.publicKey)
        #expect(recovered.generation != original.generation && recovered.groupId == original.groupId)
        #expect(recovered.party == 0 && recovered.rootChainCode == original.rootChainCode)
        // Committed at all three.
        #expect(try fixture.storeA.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        #expect(try fixture.storeB.share(keyId: original.keyId)?.gen == [UInt8](recovered.generation))
        let record = try #require(try await storage.read(keyId: original.keyId))
        #expect(record.current != nil && record.staged == nil)

        for signer in [TrioSigner.nodeA, .nodeB] {
            let message = testMessage(.eddsa, "recovered, signer \(signer)")
            let signature = try await session.signature(keyshare: recovered, message: message, chainPath: "m/7/1", signer: signer)
            let derived = try FROST.derivePublicKey(try recovered.frostKeyshare(), path: [7, 1])
            let key = try Ed25519.VerifyingKey(bytes: derived.publicKey.bytes)
            #expect(key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message)))
        }
        // The old app share is refused by the nodes, and it does not combine with a new node share.
        await #expect(throws: SilentShardError.staleKeyshare) {
            _ = try await session.signature(keyshare: original, message: testMessage(.eddsa, "old share"))
        }
        let message = Array("old with new".utf8)
        let verifying = try Ed25519.VerifyingKey(bytes: [UInt8](original.publicKey))
        let newA = try Self.nodeShare(fixture.storeA, original.keyId)
        let newB = try Self.nodeShare(fixture.storeB, original.keyId)
        #expect(newA.secretShare != oldA.secretShare)
        var rng = SecureRandom()  // sized: zero-sized inout generators crash TSan
        let mixed = try? FROST.LocalRun.sign([try original.frostKeyshare(), newA], signers: [0, 1], message: message, using: &rng)
        #expect(mixed.map { verifying.isValidSignature($0, for: message) } != true)
        // The three new shares are consistent: any two sign.
        let all = [try recovered.frostKeyshare(), newA, newB]
        for signers: [PartyIndex] in [[0, 1], [0, 2], [1, 2]] {
            let signature = try FROST.LocalRun.sign(all, signers: signers, message: message, using: &rng)
            #expect(verifying.isValidSignature(signature, for: message))
        }
    }

    /// An unknown key is KEY_NOT_FOUND and changes nothing.
    @Test func eddsaRecoverUnknownKey() async throws {
        let fixture = try TrioFixture(algorithm: .eddsa)
        let original = try await fixture.session.keygen()
        let other = FROST.Point(base: FROST.Scalar.random()).bytes
        await #expect(throws: SilentShardError.keyNotFound(keyId: nil)) {
            _ = try await fixture.session.recovery(keysharePublicKey: Data(other))
        }
        #expect(try fixture.storeA.share(keyId: original.keyId)?.gen == [UInt8](original.generation))
        #expect(try fixture.storeB.share(keyId: original.keyId)?.gen == [UInt8](original.generation))
    }
}
