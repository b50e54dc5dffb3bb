import Foundation
import MPCCrypto
import SilentShardCore

/// Verifies with libsecp256k1 under the keyshare's root key, and by public key recovery.
func verifyECDSA(_ signature: Signature, hash: Data, keyshare: Keyshare) throws -> Bool {
    let key = try Secp256k1.Point(compressed: [UInt8](keyshare.publicKey))
    guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
    let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
    let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](hash))
    return Secp256k1.ECDSA.verify(raw, hash: [UInt8](hash), publicKey: key) && recovered == key
}

/// Verifies with libsodium (strict `crypto_sign_verify_detached`) under the keyshare's root key.
func verifyEdDSA(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
    let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
    return key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message))
}

func verify(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
    keyshare.algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                 : try verifyEdDSA(signature, message: message, keyshare: keyshare)
}

func testMessage(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
    algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
}

