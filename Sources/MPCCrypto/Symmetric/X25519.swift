internal import CSodium

/// X25519 key agreement (RFC 7748) from libsodium.
public enum X25519 {
    /// An X25519 private key.
    public struct PrivateKey: Sendable {
        private let secret: [UInt8]
        /// The matching public key.
        public let publicKey: PublicKey

        /// A key from 32 bytes (clamped by X25519 itself, as RFC 7748 says).
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == 32 else {
                throw .invalidLength(expected: 32, actual: rawRepresentation.count)
            }
            Sodium.ensureReady()
            var publicBytes = [UInt8](repeating: 0, count: 32)
            guard crypto_scalarmult_base(&publicBytes, rawRepresentation) == 0 else { throw .invalidKey }
            secret = rawRepresentation
            publicKey = PublicKey(unchecked: publicBytes)
        }

        /// A fresh random key.
        public init() {
            var bytes: [UInt8]
            var key: PrivateKey?
            repeat {
                bytes = SecureRandom.bytes(count: 32)
                key = try? PrivateKey(rawRepresentation: bytes)
            } while key == nil
            self = key.unsafelyUnwrapped
        }

        /// The raw private key.
        public var rawRepresentation: [UInt8] { secret }

        /// The 32-byte shared secret with a peer. Fails on the all-zero result that a small-order peer
        /// key produces.
        public func sharedSecret(with peer: PublicKey) throws(CryptoError) -> [UInt8] {
            var shared = [UInt8](repeating: 0, count: 32)
            guard crypto_scalarmult(&shared, secret, peer.bytes) == 0 else { throw .weakSharedSecret }
            return shared
        }
    }

    /// An X25519 public key (any 32 bytes decode; weak keys fail at agreement).
    public struct PublicKey: Sendable, Equatable {
        /// The 32-byte encoding.
        public let bytes: [UInt8]

        init(unchecked bytes: [UInt8]) { self.bytes = bytes }

        public init(bytes: [UInt8]) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            self.bytes = bytes
        }
    }
}
