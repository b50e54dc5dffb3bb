internal import COpenSSL

/// ECDSA over NIST P-256 with SHA-256 (OpenSSL), the other key type a `MessageSigner` may use.
public enum P256 {
    /// A P-256 signing key.
    public struct SigningKey: Sendable {
        private let key: EVPKey
        /// The 32-byte big-endian private scalar.
        public let rawRepresentation: [UInt8]
        /// The matching verifying key.
        public let verifyingKey: VerifyingKey

        /// A key from a 32-byte big-endian scalar in [1, n).
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == 32 else {
                throw .invalidLength(expected: 32, actual: rawRepresentation.count)
            }
            let publicBytes = try P256Group.publicKey(forPrivateKey: rawRepresentation)
            key = try EVPKey.p256(privateKey: rawRepresentation, publicKey: publicBytes)
            self.rawRepresentation = rawRepresentation
            verifyingKey = try VerifyingKey(x963Representation: publicBytes)
        }

        /// A fresh random key.
        public init() {
            // 32 random bytes are a valid scalar except with probability 2^-32 per draw.
            for _ in 0..<64 {
                if let key = try? SigningKey(rawRepresentation: SecureRandom.bytes(count: 32)) {
                    self = key
                    return
                }
            }
            preconditionFailure("P-256 key generation failed 64 times: OpenSSL is not working")
        }

        /// Signs SHA-256(message).
        public func signature(for message: [UInt8]) throws(CryptoError) -> Signature {
            let der = try key.sign(message)
            return try Signature(derRepresentation: der)
        }
    }

    /// A P-256 verifying key.
    public struct VerifyingKey: Sendable, Equatable {
        private let key: EVPKey
        /// The 65-byte uncompressed SEC1 encoding (0x04 ‖ x ‖ y).
        public let x963Representation: [UInt8]

        /// Decodes a SEC1 public key, compressed (33 bytes) or uncompressed (65 bytes), on the curve.
        public init(x963Representation bytes: [UInt8]) throws(CryptoError) {
            guard (bytes.count == 65 && bytes.first == 0x04)
                || (bytes.count == 33 && (bytes.first == 0x02 || bytes.first == 0x03))
            else { throw .invalidKey }
            let uncompressed = try P256Group.uncompressed(bytes)
            key = try EVPKey.p256(publicKey: uncompressed)
            x963Representation = uncompressed
        }

        /// The 33-byte compressed encoding.
        public var compressedRepresentation: [UInt8] {
            guard let last = x963Representation.last else { return [] }
            return [0x02 | (last & 1)] + x963Representation[1..<33]
        }

        /// Whether `signature` is a valid ECDSA signature of SHA-256(message).
        public func isValidSignature(_ signature: Signature, for message: [UInt8]) -> Bool {
            key.verify(signature.derRepresentation, message: message)
        }

        public static func == (lhs: Self, rhs: Self) -> Bool { lhs.x963Representation == rhs.x963Representation }
    }

    /// A P-256 ECDSA signature.
    public struct Signature: Sendable, Equatable {
        /// r ‖ s, 32 bytes each, big-endian.
        public let rawRepresentation: [UInt8]

        /// From r ‖ s (64 bytes); r and s must be in [1, n).
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == 64 else {
                throw .invalidLength(expected: 64, actual: rawRepresentation.count)
            }
            try P256Group.checkSignatureComponents(Array(rawRepresentation[0..<32]), Array(rawRepresentation[32..<64]))
            self.rawRepresentation = rawRepresentation
        }

        /// From strict DER (re-encoding must give the same bytes).
        public init(derRepresentation: [UInt8]) throws(CryptoError) {
            let (r, s) = try ECDSADER.decode(derRepresentation)
            try self.init(rawRepresentation: r + s)
        }

        /// The DER encoding.
        public var derRepresentation: [UInt8] {
            (try? ECDSADER.encode(r: Array(rawRepresentation[0..<32]), s: Array(rawRepresentation[32..<64]))) ?? []
        }
    }
}
