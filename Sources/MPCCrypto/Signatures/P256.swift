/// ECDSA over NIST P-256 with SHA-256 (the platform backend: OpenSSL on Linux, CryptoKit on Apple), the other key
/// type a `MessageSigner` may use.
public enum P256 {
    /// A P-256 signing key.
    public struct SigningKey: Sendable {
        private let key: P256Backend.PrivateKey
        /// The 32-byte big-endian private scalar.
        public let rawRepresentation: [UInt8]
        /// The matching verifying key.
        public let verifyingKey: VerifyingKey

        /// A key from a 32-byte big-endian scalar in [1, n).
        public init(rawRepresentation: [UInt8]) throws(CryptoError) {
            guard rawRepresentation.count == 32 else {
                throw .invalidLength(expected: 32, actual: rawRepresentation.count)
            }
            let (key, publicBytes) = try P256Backend.privateKey(rawRepresentation: rawRepresentation)
            self.key = key
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
            preconditionFailure("P-256 key generation failed 64 times: the crypto backend is not working")
        }

        /// Signs SHA-256(message).
        public func signature(for message: [UInt8]) throws(CryptoError) -> Signature {
            try Signature(rawRepresentation: try P256Backend.sign(message, with: key))
        }
    }

    /// A P-256 verifying key.
    public struct VerifyingKey: Sendable, Equatable {
        private let key: P256Backend.PublicKey
        /// The 65-byte uncompressed SEC1 encoding (0x04 ‖ x ‖ y).
        public let x963Representation: [UInt8]

        /// Decodes a SEC1 public key, compressed (33 bytes) or uncompressed (65 bytes), on the curve.
        public init(x963Representation bytes: [UInt8]) throws(CryptoError) {
            guard (bytes.count == 65 && bytes.first == 0x04)
                || (bytes.count == 33 && (bytes.first == 0x02 || bytes.first == 0x03))
            else { throw .invalidKey }
            let (key, uncompressed) = try P256Backend.publicKey(sec1: bytes)
            self.key = key
            x963Representation = uncompressed
        }

        /// The 33-byte compressed encoding.
        public var compressedRepresentation: [UInt8] {
            guard let last = x963Representation.last else { return [] }
            return [0x02 | (last & 1)] + x963Representation[1..<33]
        }

        /// Whether `signature` is a valid ECDSA signature of SHA-256(message).
        public func isValidSignature(_ signature: Signature, for message: [UInt8]) -> Bool {
            P256Backend.isValidSignature(signature.rawRepresentation, for: message, under: key)
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
            try Self.checkComponents(Array(rawRepresentation[0..<32]), Array(rawRepresentation[32..<64]))
            self.rawRepresentation = rawRepresentation
        }

        /// From strict DER (re-encoding must give the same bytes).
        public init(derRepresentation: [UInt8]) throws(CryptoError) {
            let (r, s) = try ECDSADER.decode(derRepresentation)
            try self.init(rawRepresentation: r + s)
        }

        /// The P-256 order n, big-endian.
        static let order: [UInt8] = [
            0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
            0xBC, 0xE6, 0xFA, 0xAD, 0xA7, 0x17, 0x9E, 0x84, 0xF3, 0xB9, 0xCA, 0xC2, 0xFC, 0x63, 0x25, 0x51,
        ]

        /// r and s must be in [1, n) (signatures are public: a plain comparison is fine).
        static func checkComponents(_ r: [UInt8], _ s: [UInt8]) throws(CryptoError) {
            for component in [r, s] {
                guard component.contains(where: { $0 != 0 }), component.lexicographicallyPrecedes(order)
                else { throw .invalidSignatureEncoding }
            }
        }

        /// The DER encoding.
        public var derRepresentation: [UInt8] {
            (try? ECDSADER.encode(r: Array(rawRepresentation[0..<32]), s: Array(rawRepresentation[32..<64]))) ?? []
        }
    }
}
