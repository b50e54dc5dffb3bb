import Foundation
import MPCCrypto
import SilentShardCore
import Testing

/// Independent checks of what the SDK returns, with the primitives (libsecp256k1, libsodium), not
/// through the SDK's own verification.
enum EndToEnd {
    /// ECDSA: libsecp256k1 verify of `message` (the 32-byte hash) and public-key recovery to the key;
    /// EdDSA: libsodium strict Ed25519 verification.
    static func verifies(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
        switch keyshare.algorithm {
        case .ecdsa:
            let key = try Secp256k1.Point(compressed: [UInt8](keyshare.publicKey))
            guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
            let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
            let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](message))
            return Secp256k1.ECDSA.verify(raw, hash: [UInt8](message), publicKey: key) && recovered == key
        case .eddsa:
            let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
            return key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message))
        }
    }

    /// What the app signs for `text`: its SHA-256 for ECDSA, the bytes themselves for EdDSA.
    static func message(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
        algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
    }
}

/// Checks of an exported key, independent of `ExportedKey` itself.
enum ExportChecks {
    /// privateKey·G with the primitives (not through `ExportedKey`).
    static func publicKey(of key: ExportedKey) throws -> Data {
        switch key.algorithm {
        case .ecdsa: return Data(try Secp256k1.Point(base: Secp256k1.Scalar(nonZeroBytes: [UInt8](key.privateKey))).compressed())
        case .eddsa: return Data(Ed25519.Point(base: try Ed25519.Scalar(nonZeroBytes: [UInt8](key.privateKey))).bytes)
        }
    }

    /// Signs a fresh message with the exported key alone and verifies under `publicKey`
    /// (libsecp256k1 / libsodium strict verification).
    static func expectSigns(_ key: ExportedKey, for publicKey: Data) throws {
        let message = SecureRandom.bytes(count: 32)
        switch key.algorithm {
        case .ecdsa:
            let signature = try Secp256k1.ECDSA.sign(hash: message, privateKey: Secp256k1.Scalar(nonZeroBytes: [UInt8](key.privateKey)))
            #expect(Secp256k1.ECDSA.verify(signature, hash: message, publicKey: try Secp256k1.Point(bytes: [UInt8](publicKey))))
        case .eddsa:
            // RFC 8032 signing from the scalar a (no seed): R = r·B, k = H(R ‖ A ‖ M), S = r + k·a.
            let a = try Ed25519.Scalar(nonZeroBytes: [UInt8](key.privateKey))
            let r = Ed25519.Scalar.random()
            let R = Ed25519.Point(base: r).bytes
            let k = try Ed25519.Scalar(reducingWide: SHA512.hash(R + [UInt8](publicKey) + message))
            let signature = R + (r + k * a).bytes
            #expect(try Ed25519.VerifyingKey(bytes: [UInt8](publicKey)).isValidSignature(signature, for: message))
        }
    }

    /// The private key appears in no description, dump or reflection of the key.
    static func expectRedacted(_ key: ExportedKey) {
        let secretHex = Hex.encode([UInt8](key.privateKey))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, String(describing: key), "\(key)", key.debugDescription, String(reflecting: key), dumped] {
            #expect(!text.lowercased().contains(secretHex), "\(text)")
            #expect(!text.contains(key.privateKey.base64EncodedString()))
        }
        #expect(key.description.contains("redacted"))
    }
}
