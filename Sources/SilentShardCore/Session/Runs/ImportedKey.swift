import MPCCrypto
import MPCProtocols

extension SessionRuns {
    /// A key to import (the importer, the app, knows its secret; the other parties only its public key).
    package enum ImportedKey: Sendable {
        case ecdsa(publicKey: Secp256k1.Point, secret: Secp256k1.Scalar?)
        case eddsa(publicKey: FROST.Point, secret: FROST.Scalar?)

        /// The importer's key from its 32 private bytes. ECDSA: the big-endian secp256k1 scalar; EdDSA:
        /// the RFC 8032 seed.
        package init(algorithm: Keyshare.Algorithm, privateKey: [UInt8]) throws(SilentShardError) {
            switch algorithm {
            case .ecdsa:
                guard let x = try? Secp256k1.Scalar(nonZeroBytes: privateKey) else {
                    throw .invalidInput(reason: "private key is not a valid secp256k1 scalar")
                }
                self = .ecdsa(publicKey: Secp256k1.Point(base: x), secret: x)
            case .eddsa:
                guard let x = try? FROST.secretScalar(fromSeed: privateKey) else {
                    throw .invalidInput(reason: "private key is not a 32-byte Ed25519 seed")
                }
                self = .eddsa(publicKey: FROST.Point(base: x), secret: x)
            }
        }

        /// Another party's view of the key: the SETUP's public key, no secret.
        package init(algorithm: Keyshare.Algorithm, publicKey: [UInt8]) throws(SilentShardError) {
            do {
                switch algorithm {
                case .ecdsa: self = .ecdsa(publicKey: try Secp256k1.Point(compressed: publicKey), secret: nil)
                case .eddsa: self = .eddsa(publicKey: try FROST.Point(bytes: publicKey), secret: nil)
                }
            } catch { throw .invalidInput(reason: "import public key") }
        }

        /// The key's protocol key id.
        package func keyID() throws(SilentShardError) -> KeyID {
            switch self {
            case .ecdsa(let point, _):
                guard let bytes = try? DKLsDKG.keyId(for: point), let id = KeyID(bytes) else { throw .invalidInput(reason: "private key") }
                return id
            case .eddsa(let point, _):
                guard let id = KeyID(FROST.keyId(for: point)) else { throw .invalidInput(reason: "private key") }
                return id
            }
        }

        /// The public key as SETUP carries it (33-byte compressed / 32 bytes).
        package func publicKeyBytes() throws(SilentShardError) -> [UInt8] {
            switch self {
            case .ecdsa(let point, _):
                guard let compressed = try? point.compressed() else { throw .invalidInput(reason: "private key") }
                return compressed
            case .eddsa(let point, _): return point.bytes
            }
        }
    }
}
