import Foundation
import MPCCrypto
import SilentShardCore

/// Checks a signature the way a verifier outside the wallet would: libsecp256k1 ECDSA (and public
/// key recovery from r, s, v) or libsodium Ed25519, under the keyshare's public key.
public enum SignatureCheck {
    /// Whether `signature` over `message` (ECDSA: the 32-byte hash) verifies under the key of `keyshare`.
    public static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) -> Bool {
        let raw = Array(signature.rawRepresentation)
        switch keyshare.algorithm {
        case .ecdsa:
            guard raw.count == 64, message.count == 32,
                  let parsed = try? Secp256k1.ECDSASignature(r: Array(raw[0..<32]), s: Array(raw[32..<64]),
                                                             recoveryId: signature.recoveryId ?? 0),
                  let key = try? Secp256k1.Point(bytes: Array(keyshare.publicKey)),
                  let recovered = try? Secp256k1.ECDSA.recoverPublicKey(parsed, hash: Array(message))
            else { return false }
            return Secp256k1.ECDSA.verify(parsed, hash: Array(message), publicKey: key) && recovered == key
        case .eddsa:
            guard let key = try? Ed25519.VerifyingKey(bytes: Array(keyshare.publicKey)) else { return false }
            return key.isValidSignature(raw, for: Array(message))
        }
    }
}
