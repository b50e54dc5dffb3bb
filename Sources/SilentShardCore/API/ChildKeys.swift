import Foundation
import MPCCrypto
import MPCProtocols

extension SilentShard.ECDSA {
    /// The public key that signs under the soft BIP32 `path` ("m", "m/0/1") of `keyshare`'s key — the key a
    /// `signature(keyshare:message:chainPath:)` with that path verifies under: 33-byte compressed SEC1.
    /// Hardened indices are refused (`invalidInput`): they need the private key (see `hardDerivation`).
    public static func deriveChildPublicKey(keyshare: Keyshare, path: String) throws(SilentShardError) -> Data {
        guard keyshare.algorithm == .ecdsa else { throw .invalidInput(reason: "not an ECDSA keyshare") }
        do {
            let root = try Secp256k1.Point(bytes: [UInt8](keyshare.publicKey))
            let child = try DerivationPath(path).derive(publicKey: root, chainCode: [UInt8](keyshare.rootChainCode))
            return Data(try child.publicKey.compressed())
        } catch {
            throw .invalidInput(reason: "invalid soft path")
        }
    }
}

extension SilentShard.EdDSA {
    /// The public key that signs under the soft BIP32-Ed25519 `path` of `keyshare`'s key (32 bytes).
    public static func deriveChildPublicKey(keyshare: Keyshare, path: String) throws(SilentShardError) -> Data {
        guard keyshare.algorithm == .eddsa else { throw .invalidInput(reason: "not an EdDSA keyshare") }
        do {
            let root = try Ed25519.Point(bytes: [UInt8](keyshare.publicKey))
            let child = try FROST.Derivation(publicKey: root, chainCode: [UInt8](keyshare.rootChainCode),
                                             path: FROST.Derivation.parse(path))
            return Data(child.publicKey.bytes)
        } catch {
            throw .invalidInput(reason: "invalid soft path")
        }
    }
}

extension Keyshare {
    /// The public key that signs under the soft `path` (`SilentShard.ECDSA/EdDSA.deriveChildPublicKey`).
    public func childPublicKey(path: String) throws(SilentShardError) -> Data {
        algorithm == .ecdsa ? try SilentShard.ECDSA.deriveChildPublicKey(keyshare: self, path: path)
                            : try SilentShard.EdDSA.deriveChildPublicKey(keyshare: self, path: path)
    }
}

extension Signature {
    /// Whether this signature verifies under `publicKey` (ECDSA: 33/65-byte SEC1, `message` = the 32-byte
    /// hash, libsecp256k1 verify and, when the recovery id is present, public-key recovery must give the
    /// same key; EdDSA: 32-byte key, libsodium's strict RFC 8032 verify of `message`).
    public func isValid(for message: Data, publicKey: Data) -> Bool {
        let raw = [UInt8](rawRepresentation)
        switch algorithm {
        case .ecdsa:
            guard raw.count == 64,
                  let parsed = try? Secp256k1.ECDSASignature(r: Array(raw[0..<32]), s: Array(raw[32..<64]),
                                                             recoveryId: recoveryId ?? 0),
                  let key = try? Secp256k1.Point(bytes: [UInt8](publicKey))
            else { return false }
            guard Secp256k1.ECDSA.verify(parsed, hash: [UInt8](message), publicKey: key) else { return false }
            guard recoveryId != nil else { return true }
            return (try? Secp256k1.ECDSA.recoverPublicKey(parsed, hash: [UInt8](message))) == key
        case .eddsa:
            guard let key = try? Ed25519.VerifyingKey(bytes: [UInt8](publicKey)) else { return false }
            return key.isValidSignature(raw, for: [UInt8](message))
        }
    }
}
