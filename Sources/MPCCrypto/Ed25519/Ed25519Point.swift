internal import CSodium

extension Ed25519 {
    /// A point of the prime-order subgroup of edwards25519, possibly the identity.
    ///
    /// Decoding accepts only canonical encodings of points on the curve, in the prime-order
    /// subgroup and not of small order (`crypto_core_ed25519_is_valid_point`); the identity (which is
    /// of small order) only through `init(bytes:allowingIdentity:)`.
    public struct Point: Sendable {
        /// The canonical 32-byte encoding.
        let storage: [UInt8]

        init(unchecked storage: [UInt8]) { self.storage = storage }

        static let identityEncoding: [UInt8] = [1] + [UInt8](repeating: 0, count: 31)

        /// The identity (0, 1).
        public static let identity = Point(unchecked: identityEncoding)

        /// The base point B of RFC 8032.
        public static let generator = Point(base: .one)

        /// Whether this is the identity.
        public var isIdentity: Bool { storage == Point.identityEncoding }

        /// Decodes a point from outside: canonical, on the curve, in the prime-order subgroup, not of
        /// small order. The identity is accepted only when `allowingIdentity` is set.
        public init<Bytes: Collection<UInt8>>(bytes: Bytes, allowingIdentity: Bool = false) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            let input = Array(bytes)
            if input == Point.identityEncoding {
                guard allowingIdentity else { throw .identityPoint }
                storage = input
                return
            }
            guard Ed25519.isValidPoint(input) else { throw .pointNotInPrimeOrderSubgroup }
            storage = input
        }

        /// scalar·B (constant time).
        public init(base scalar: Scalar) {
            if scalar.isZero {
                storage = Point.identityEncoding
                return
            }
            var out = [UInt8](repeating: 0, count: 32)
            // Fails only for a zero scalar, excluded above.
            _ = crypto_scalarmult_ed25519_base_noclamp(&out, scalar.storage)
            storage = out
        }

        /// The 32-byte encoding.
        public var bytes: [UInt8] { storage }

        public static func + (lhs: Point, rhs: Point) -> Point {
            var out = [UInt8](repeating: 0, count: 32)
            // Both encodings are valid points by construction, so the call cannot fail.
            _ = crypto_core_ed25519_add(&out, lhs.storage, rhs.storage)
            return Point(unchecked: out)
        }

        public static func - (lhs: Point, rhs: Point) -> Point {
            var out = [UInt8](repeating: 0, count: 32)
            _ = crypto_core_ed25519_sub(&out, lhs.storage, rhs.storage)
            return Point(unchecked: out)
        }

        public static prefix func - (point: Point) -> Point { Point.identity - point }

        /// scalar·P, constant time in the scalar (`crypto_scalarmult_ed25519_noclamp`).
        public static func * (scalar: Scalar, point: Point) -> Point {
            if scalar.isZero || point.isIdentity { return .identity }
            var out = [UInt8](repeating: 0, count: 32)
            // P is in the prime-order subgroup and the scalar is non-zero and reduced, so the
            // product is never the identity and the call cannot fail.
            _ = crypto_scalarmult_ed25519_noclamp(&out, scalar.storage, point.storage)
            return Point(unchecked: out)
        }

        public static func * (point: Point, scalar: Scalar) -> Point { scalar * point }

        public static func += (lhs: inout Point, rhs: Point) { lhs = lhs + rhs }
    }
}

extension Ed25519.Point: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.storage == rhs.storage }
}

extension Ed25519.Point: CustomStringConvertible {
    /// The encoding in hex (points are public).
    public var description: String { "Ed25519.Point(\(Hex.encode(storage)))" }
}
