import Foundation
import MPCCrypto
import MPCProtocols

/// A whole private key obtained by export (`docs/protocol/session.md` §9.3, dkls23.md §16): whoever holds it no
/// longer needs the MPC. Treat it like any private key; `description`, `debugDescription` and
/// reflection (`dump`, debuggers) never show `privateKey`.
///
/// The constructor checks that `privateKey` belongs to `publicKey`, so an `ExportedKey` value always
/// holds a matching pair.
public struct ExportedKey: Sendable, Equatable, SecretRedacting {
    /// The signature scheme of the key.
    public let algorithm: Keyshare.Algorithm
    /// The secret (32 bytes). ECDSA: the secp256k1 scalar, big-endian (what wallets import as a raw
    /// private key). EdDSA: the Ed25519 secret **scalar** a, little-endian (RFC 8032 encoding of a
    /// scalar), with a·B = `publicKey`. It is not an RFC 8032 seed: a seed cannot be recovered from
    /// the scalar, so sign with a scalar-based Ed25519 implementation.
    public let privateKey: Data
    /// The chain code (32 bytes) belonging to the key at `chainPath` (the root chain code for "m").
    public let chainCode: Data
    /// The public key: ECDSA 33-byte compressed SEC1; EdDSA 32 bytes.
    public let publicKey: Data
    /// The key id of the exported key (hex), whatever `chainPath` is.
    public let keyId: String
    /// The soft derivation path this key belongs to ("m" for the root key).
    public let chainPath: String

    /// Checks `privateKey`·G = `publicKey` (`invalidInput` otherwise).
    public init(algorithm: Keyshare.Algorithm, privateKey: Data, chainCode: Data, publicKey: Data, keyId: String,
                chainPath: String = "m") throws(SilentShardError) {
        guard privateKey.count == 32, chainCode.count == 32 else { throw .invalidInput(reason: "exported key sizes") }
        switch algorithm {
        case .ecdsa:
            guard let scalar = try? Secp256k1.Scalar(nonZeroBytes: [UInt8](privateKey)),
                  let computed = try? Secp256k1.Point(base: scalar).compressed(), computed == [UInt8](publicKey)
            else { throw .invalidInput(reason: "exported private key does not match the public key") }
        case .eddsa:
            guard let scalar = try? Ed25519.Scalar(nonZeroBytes: [UInt8](privateKey)),
                  Ed25519.Point(base: scalar).bytes == [UInt8](publicKey)
            else { throw .invalidInput(reason: "exported private key does not match the public key") }
        }
        self.algorithm = algorithm
        self.privateKey = privateKey
        self.chainCode = chainCode
        self.publicKey = publicKey
        self.keyId = keyId
        self.chainPath = chainPath
    }

    /// Public fields only.
    public var description: String {
        "ExportedKey(\(algorithm), key \(keyId), path \(chainPath), public key \(Hex.encode([UInt8](publicKey))), private key redacted)"
    }

    /// Compares the secret in constant time.
    public static func == (lhs: ExportedKey, rhs: ExportedKey) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.publicKey == rhs.publicKey && lhs.chainCode == rhs.chainCode
            && lhs.keyId == rhs.keyId && lhs.chainPath == rhs.chainPath
            && constantTimeEqual([UInt8](lhs.privateKey), [UInt8](rhs.privateKey))
    }
}
