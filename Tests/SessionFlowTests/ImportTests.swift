import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing

/// Import: a known key is split with the node(s); the keyshare's public key is the imported one (computed
/// independently: libsecp256k1 x·G, libsodium's seed keypair); every node committed it; every signer set signs
/// under it; importing the same key again is KEY_EXISTS and changes nothing.
@Suite("Session: import", .serialized, .heavy, .timeLimit(.minutes(30)))
struct ImportTests {
    @Test(arguments: Keyshare.Mode.allCases, [Keyshare.Algorithm.ecdsa, .eddsa])
    func importThenSign(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm) async throws {
        let fixture = try SessionFixture(mode: mode, algorithm: algorithm)
        // duo: a fixed key; trio: a random one.
        let privateKey = mode == .duo ? Data(SHA256.hash(Array("import test key".utf8))) : Data(SecureRandom.bytes(count: 32))
        let chainCode = mode == .duo ? Data(repeating: 0x42, count: 32) : Data(SecureRandom.bytes(count: 32))
        let keyshare = try await fixture.session.import(privateKey: privateKey, rootChainCode: chainCode)
        switch algorithm {
        case .ecdsa:
            let expected = Secp256k1.Point(base: try Secp256k1.Scalar(nonZeroBytes: [UInt8](privateKey)))
            #expect(keyshare.publicKey == Data(try expected.compressed()))
        case .eddsa:
            #expect(keyshare.publicKey == Data(try Ed25519.SigningKey(seed: [UInt8](privateKey)).verifyingKey.bytes))
        }
        #expect(keyshare.rootChainCode == chainCode)
        #expect(keyshare.mode == mode && keyshare.partyCount == (mode == .duo ? 2 : 3))
        if let trio = fixture.trio { #expect(keyshare.groupId == Data(trio.groupID)) }
        for store in fixture.stores { #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation)) }
        let message = testMessage(algorithm, "imported")
        for signature in try await fixture.session.signatureWithEachSigner(keyshare: keyshare, message: message) {
            #expect(try verify(signature, message: message, keyshare: keyshare))
        }
        await #expect(throws: SilentShardError.keyAlreadyExists) {
            _ = try await fixture.session.import(privateKey: privateKey, rootChainCode: chainCode)
        }
        for store in fixture.stores { #expect(try store.share(keyId: keyshare.keyId)?.gen == [UInt8](keyshare.generation)) }
    }
}
