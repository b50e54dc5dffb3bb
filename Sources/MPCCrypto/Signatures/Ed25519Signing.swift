internal import CSodium

extension Ed25519 {
    /// An RFC 8032 Ed25519 signing key (libsodium `crypto_sign_*`).
    public struct SigningKey: Sendable {
        private let secretKey: [UInt8]   // libsodium's seed ‖ public key
        /// The 32-byte seed (RFC 8032 private key).
        public let seed: [UInt8]
        /// The verifying key.
        public let verifyingKey: VerifyingKey

        /// A key from a 32-byte RFC 8032 seed.
        public init(seed: [UInt8]) throws(CryptoError) {
            guard seed.count == 32 else { throw .invalidLength(expected: 32, actual: seed.count) }
            Sodium.ensureReady()
            var publicKey = [UInt8](repeating: 0, count: 32)
            var secretKey = [UInt8](repeating: 0, count: 64)
            guard crypto_sign_seed_keypair(&publicKey, &secretKey, seed) == 0 else {
                throw .libraryFailure("crypto_sign_seed_keypair")
            }
            self.seed = seed
            self.secretKey = secretKey
            self.verifyingKey = VerifyingKey(unchecked: publicKey)
        }

        /// A fresh random key.
        public init() {
            // A 32-byte seed is always accepted.
            do { try self.init(seed: SecureRandom.bytes(count: 32)) } catch { preconditionFailure("seed length") }
        }

        /// The 64-byte signature of a message.
        public func signature<Bytes: Collection<UInt8>>(for message: Bytes) -> [UInt8] {
            let input = Array(message)
            var signature = [UInt8](repeating: 0, count: 64)
            var length: UInt64 = 0
            _ = crypto_sign_detached(&signature, &length, input, UInt64(input.count), secretKey)
            return signature
        }
    }

    /// An Ed25519 verifying (public) key.
    public struct VerifyingKey: Sendable, Equatable {
        /// The 32-byte encoding.
        public let bytes: [UInt8]

        init(unchecked bytes: [UInt8]) { self.bytes = bytes }

        /// Decodes a public key: canonical, on the curve, not of small order.
        public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            let input = Array(bytes)
            guard Ed25519.isValidPoint(input) else { throw .invalidKey }
            self.bytes = input
        }

        /// Whether `signature` is a valid RFC 8032 signature of `message` (libsodium rejects
        /// non-canonical S and small-order R or keys).
        public func isValidSignature<Bytes: Collection<UInt8>>(_ signature: [UInt8], for message: Bytes) -> Bool {
            guard signature.count == 64 else { return false }
            Sodium.ensureReady()
            let input = Array(message)
            return crypto_sign_verify_detached(signature, input, UInt64(input.count), bytes) == 0
        }
    }
}
