internal import CSodium

/// Namespace for Ed25519: scalars modulo ℓ, points of the prime-order subgroup, RFC 8032 signatures.
public enum Ed25519 {}

extension Ed25519 {
    /// An element of Z_ℓ, ℓ = 2^252 + 27742317777372353535851937790883648493 (little-endian encodings).
    ///
    /// Arithmetic from libsodium's `crypto_core_ed25519_scalar_*` (constant time).
    /// `description` never shows the value.
    public struct Scalar: Sendable {
        /// The canonical 32-byte little-endian encoding, value < ℓ.
        let storage: [UInt8]

        init(unchecked storage: [UInt8]) { self.storage = storage }

        /// ℓ, little-endian.
        static let orderBytes: [UInt8] = [
            0xED, 0xD3, 0xF5, 0x5C, 0x1A, 0x63, 0x12, 0x58, 0xD6, 0x9C, 0xF7, 0xA2, 0xDE, 0xF9, 0xDE, 0x14,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x10,
        ]

        /// Zero.
        public static let zero = Scalar(unchecked: [UInt8](repeating: 0, count: 32))
        /// One.
        public static let one = Scalar(1)

        /// A small constant.
        public init(_ value: UInt64) {
            var bytes = [UInt8](repeating: 0, count: 32)
            for k in 0..<8 { bytes[k] = UInt8(truncatingIfNeeded: value >> UInt64(8 * k)) }
            storage = bytes
        }

        /// Decodes a canonical 32-byte little-endian scalar, rejecting values ≥ ℓ.
        public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            let input = Array(bytes)
            // sodium_compare is a constant-time comparison of little-endian numbers.
            guard sodium_compare(input, Scalar.orderBytes, 32) < 0 else { throw .scalarOutOfRange }
            storage = input
        }

        /// Decodes a canonical non-zero scalar.
        public init<Bytes: Collection<UInt8>>(nonZeroBytes bytes: Bytes) throws(CryptoError) {
            try self.init(bytes: bytes)
            guard !isZero else { throw .zeroScalar }
        }

        /// Reduces 64 little-endian bytes modulo ℓ (e.g. a SHA-512 output, as RFC 8032 does).
        public init<Bytes: Collection<UInt8>>(reducingWide bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 64 else { throw .invalidLength(expected: 64, actual: bytes.count) }
            let input = Array(bytes)
            var out = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_reduce(&out, input)
            storage = out
        }

        /// A uniformly random non-zero scalar.
        public static func random<R: RandomNumberGenerator>(using rng: inout R) -> Scalar {
            while true {
                // Wide reduction of 64 random bytes: bias ≈ 2^-259.
                let wide = rng.randomBytes(count: 64)
                var out = [UInt8](repeating: 0, count: 32)
                crypto_core_ed25519_scalar_reduce(&out, wide)
                let scalar = Scalar(unchecked: out)
                if !scalar.isZero { return scalar }
            }
        }

        /// A uniformly random non-zero scalar from the system CSPRNG.
        public static func random() -> Scalar {
            var rng = SecureRandom()
            return random(using: &rng)
        }

        /// The 32-byte little-endian encoding.
        public var bytes: [UInt8] { storage }

        /// Whether the scalar is zero (constant time).
        public var isZero: Bool { sodium_is_zero(storage, 32) == 1 }

        public static func + (a: Scalar, b: Scalar) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_add(&out, a.storage, b.storage)
            return Scalar(unchecked: out)
        }

        public static func - (a: Scalar, b: Scalar) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_sub(&out, a.storage, b.storage)
            return Scalar(unchecked: out)
        }

        public static func * (a: Scalar, b: Scalar) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_mul(&out, a.storage, b.storage)
            return Scalar(unchecked: out)
        }

        public static prefix func - (a: Scalar) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            crypto_core_ed25519_scalar_negate(&out, a.storage)
            return Scalar(unchecked: out)
        }

        public static func += (a: inout Scalar, b: Scalar) { a = a + b }
        public static func -= (a: inout Scalar, b: Scalar) { a = a - b }
        public static func *= (a: inout Scalar, b: Scalar) { a = a * b }

        /// The multiplicative inverse (constant time). Zero has none.
        public func inverse() throws(CryptoError) -> Scalar {
            var out = [UInt8](repeating: 0, count: 32)
            guard crypto_core_ed25519_scalar_invert(&out, storage) == 0 else { throw .zeroScalar }
            return Scalar(unchecked: out)
        }
    }
}

extension Ed25519.Scalar: Equatable {
    /// Constant-time comparison.
    public static func == (a: Self, b: Self) -> Bool { sodium_memcmp(a.storage, b.storage, 32) == 0 }
}

extension Ed25519.Scalar: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never shows the value.
    public var description: String { "Ed25519.Scalar(redacted)" }
    public var debugDescription: String { description }
}
