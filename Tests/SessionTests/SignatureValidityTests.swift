import Foundation
import MPCCrypto
import SilentShardCore
import Testing

/// `Signature.isValid(for:publicKey:)`, the SDK's public check, against signatures made by the C
/// libraries directly.
@Suite("Signature.isValid")
struct SignatureValidityTests {
    @Test func ecdsa() throws {
        let key = Secp256k1.Scalar.random(), other = Secp256k1.Scalar.random()
        let hash = SHA256.hash(Array("valid".utf8))
        let signature = Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: hash, privateKey: key))
        let publicKey = Data(try Secp256k1.Point(base: key).compressed())
        #expect(signature.isValid(for: Data(hash), publicKey: publicKey))
        #expect(!signature.isValid(for: Data(SHA256.hash(Array("other".utf8))), publicKey: publicKey))
        #expect(!signature.isValid(for: Data(hash), publicKey: Data(try Secp256k1.Point(base: other).compressed())))
        #expect(!signature.isValid(for: Data(hash), publicKey: Data([0x02] + [UInt8](repeating: 0, count: 32))))
        // A wrong recovery id: the signature verifies, but the recovered key is another one.
        let raw = [UInt8](signature.rawRepresentation)
        let flipped = try Signature(r: Data(raw[0..<32]), s: Data(raw[32..<64]), recoveryId: (signature.recoveryId ?? 0) ^ 1)
        #expect(!flipped.isValid(for: Data(hash), publicKey: publicKey))
    }

    @Test func eddsa() throws {
        let key = Ed25519.SigningKey(), message = Data("valid".utf8)
        let signature = try Signature(eddsa: Data(key.signature(for: [UInt8](message))))
        let publicKey = Data(key.verifyingKey.bytes)
        #expect(signature.isValid(for: message, publicKey: publicKey))
        #expect(!signature.isValid(for: Data("other".utf8), publicKey: publicKey))
        #expect(!signature.isValid(for: message, publicKey: Data(Ed25519.SigningKey().verifyingKey.bytes)))
        #expect(!signature.isValid(for: message, publicKey: Data([UInt8](repeating: 0xFF, count: 32))))
    }
}
