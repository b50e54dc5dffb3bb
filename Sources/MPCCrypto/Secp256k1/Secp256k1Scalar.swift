/// Namespace for secp256k1: scalars modulo the group order, points, ECDSA.
public enum Secp256k1 {}

extension Secp256k1 {
    /// An element of Z_n, n the order of secp256k1 (big-endian encodings).
    ///
    /// Pure Swift, four 64-bit limbs in Montgomery form (R = 2^256). Every operation runs in time
    /// independent of the values: no branch or memory index depends on a limb (differentially
    /// tested against libsecp256k1 and against Python's integers in `interop/`).
    /// `description` never shows the value.
    public struct Scalar: Sendable {
        // Montgomery representation a·R mod n, little-endian limbs.
        var l0: UInt64
        var l1: UInt64
        var l2: UInt64
        var l3: UInt64

        init(montgomery l0: UInt64, _ l1: UInt64, _ l2: UInt64, _ l3: UInt64) {
            self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
        }

        /// The number of bytes of an encoding.
        public static let byteCount = 32

        /// The group order n, big-endian.
        public static let orderBytes: [UInt8] = Limbs.bigEndianBytes(Limbs.n)

        /// Zero.
        public static let zero = Scalar(montgomery: 0, 0, 0, 0)
        /// One.
        public static let one = Scalar(montgomery: Limbs.rModN.0, Limbs.rModN.1, Limbs.rModN.2, Limbs.rModN.3)

        /// A small constant.
        public init(_ value: UInt64) {
            self = Scalar.fromCanonical((value, 0, 0, 0))
        }

        /// Decodes 32 big-endian bytes, rejecting values ≥ n.
        public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            let value = Limbs.fromBigEndian(bytes)
            // value < n  ⇔  value − n borrows.
            let (_, borrow) = Limbs.subtract(value, Limbs.n)
            guard borrow == 1 else { throw .scalarOutOfRange }
            self = Scalar.fromCanonical(value)
        }

        /// Decodes 32 big-endian bytes, rejecting values ≥ n and zero.
        public init<Bytes: Collection<UInt8>>(nonZeroBytes bytes: Bytes) throws(CryptoError) {
            try self.init(bytes: bytes)
            guard !isZero else { throw .zeroScalar }
        }

        /// Reduces 32 big-endian bytes modulo n (for message hashes: e = int(m) mod n).
        public init<Bytes: Collection<UInt8>>(reducing bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 32 else { throw .invalidLength(expected: 32, actual: bytes.count) }
            self = Scalar.fromCanonical(Limbs.reduceOnce(Limbs.fromBigEndian(bytes)))
        }

        /// Reduces 64 big-endian bytes modulo n (wide reduction, bias ≈ 2^-256).
        public init<Bytes: Collection<UInt8>>(reducingWide bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 64 else { throw .invalidLength(expected: 64, actual: bytes.count) }
            let high = Limbs.reduceOnce(Limbs.fromBigEndian(bytes.prefix(32)))
            let low = Limbs.fromBigEndian(bytes.dropFirst(32))
            self = Scalar.fromWide(low: low, high: high)
        }

        /// A uniformly random scalar in [1, n): 32 random bytes, redrawn while ≥ n or zero.
        public static func random<R: RandomNumberGenerator>(using rng: inout R) -> Scalar {
            while true {
                let value: Limbs.Value = (rng.next(), rng.next(), rng.next(), rng.next())
                let (_, borrow) = Limbs.subtract(value, Limbs.n)
                let isZero = (value.0 | value.1 | value.2 | value.3) == 0
                if borrow == 1 && !isZero { return fromCanonical(value) }
            }
        }

        /// A uniformly random non-zero scalar from the system CSPRNG.
        public static func random() -> Scalar {
            var rng = SecureRandom()
            return random(using: &rng)
        }

        /// The 32-byte big-endian encoding.
        public var bytes: [UInt8] {
            Limbs.bigEndianBytes(canonical)
        }

        /// Appends the 32-byte big-endian encoding to `output` (no intermediate array).
        public func appendBytes(to output: inout [UInt8]) {
            let value = canonical
            withUnsafeBytes(of: value.3.bigEndian) { output.append(contentsOf: $0) }
            withUnsafeBytes(of: value.2.bigEndian) { output.append(contentsOf: $0) }
            withUnsafeBytes(of: value.1.bigEndian) { output.append(contentsOf: $0) }
            withUnsafeBytes(of: value.0.bigEndian) { output.append(contentsOf: $0) }
        }

        /// Decodes 32 big-endian bytes from raw memory, reducing modulo n (for hash outputs).
        public init(reducingWide buffer: UnsafeRawBufferPointer) throws(CryptoError) {
            guard buffer.count == 64 else { throw .invalidLength(expected: 64, actual: buffer.count) }
            let high = Limbs.reduceOnce(Limbs.fromBigEndian(buffer: UnsafeRawBufferPointer(rebasing: buffer[0..<32])))
            let low = Limbs.fromBigEndian(buffer: UnsafeRawBufferPointer(rebasing: buffer[32..<64]))
            self = Scalar.fromWide(low: low, high: high)
        }

        /// Montgomery form of high·2^256 + low (high < n): REDC gives value·R⁻¹, one product by R³
        /// gives value·R.
        static func fromWide(low: Limbs.Value, high: Limbs.Value) -> Scalar {
            let m = Limbs.montgomeryMultiply(Limbs.montgomeryReduce(low: low, high: high), Limbs.r3ModN)
            return Scalar(montgomery: m.0, m.1, m.2, m.3)
        }

        /// The value in normal (non-Montgomery) form.
        var canonical: Limbs.Value {
            Limbs.montgomeryMultiply((l0, l1, l2, l3), (1, 0, 0, 0))
        }

        static func fromCanonical(_ value: Limbs.Value) -> Scalar {
            let m = Limbs.montgomeryMultiply(value, Limbs.r2ModN)
            return Scalar(montgomery: m.0, m.1, m.2, m.3)
        }

        var limbs: Limbs.Value { (l0, l1, l2, l3) }

        /// Whether the scalar is zero.
        public var isZero: Bool { (l0 | l1 | l2 | l3) == 0 }

        /// Sum modulo n.
        public static func + (a: Scalar, b: Scalar) -> Scalar {
            let r = Limbs.addModN(a.limbs, b.limbs)
            return Scalar(montgomery: r.0, r.1, r.2, r.3)
        }

        /// Difference modulo n.
        public static func - (a: Scalar, b: Scalar) -> Scalar {
            let r = Limbs.subtractModN(a.limbs, b.limbs)
            return Scalar(montgomery: r.0, r.1, r.2, r.3)
        }

        /// Product modulo n.
        public static func * (a: Scalar, b: Scalar) -> Scalar {
            let r = Limbs.montgomeryMultiply(a.limbs, b.limbs)
            return Scalar(montgomery: r.0, r.1, r.2, r.3)
        }

        /// Additive inverse modulo n.
        public static prefix func - (a: Scalar) -> Scalar {
            Scalar.zero - a
        }

        public static func += (a: inout Scalar, b: Scalar) { a = a + b }
        public static func -= (a: inout Scalar, b: Scalar) { a = a - b }
        public static func *= (a: inout Scalar, b: Scalar) { a = a * b }

        /// The multiplicative inverse, a^(n−2) with a fixed 4-bit window (constant time: the
        /// exponent is public). Zero has no inverse.
        public func inverse() throws(CryptoError) -> Scalar {
            guard !isZero else { throw .zeroScalar }
            // table[k] = a^k for k in 0..<16 (Montgomery form).
            var table = [Scalar](repeating: .one, count: 16)
            table[1] = self
            for k in 2..<16 { table[k] = table[k - 1] * self }
            var result = Scalar.one
            for nibble in Limbs.nMinus2Nibbles {
                result = result * result
                result = result * result
                result = result * result
                result = result * result
                result = result * table[Int(nibble)]
            }
            return result
        }

        /// Raises to a public exponent given as big-endian bytes (square-and-multiply over the
        /// exponent's bits; time depends only on the exponent's length).
        public func power(publicExponent exponent: [UInt8]) -> Scalar {
            var result = Scalar.one
            for byte in exponent {
                for bit in (0..<8).reversed() {
                    result = result * result
                    let product = result * self
                    result = Scalar.select(product, result, condition: (byte >> UInt8(bit)) & 1 == 1)
                }
            }
            return result
        }

        /// `ifOne` when the low bit of `bit` is 1, else `ifZero`: a mask built arithmetically from the
        /// bit, for secret bits (no `Bool` is formed, so the compiler has nothing to branch on).
        public static func select(_ ifOne: Scalar, _ ifZero: Scalar, bit: UInt64) -> Scalar {
            let r = Limbs.select(ifOne.limbs, ifZero.limbs, mask: 0 &- (bit & 1))
            return Scalar(montgomery: r.0, r.1, r.2, r.3)
        }

        /// `self` when the low bit of `bit` is 1, else zero (constant time).
        public func masked(by bit: UInt64) -> Scalar {
            Scalar.select(self, .zero, bit: bit)
        }

        /// `ifTrue` when `condition`, else `ifFalse`, selected with a mask. For public conditions;
        /// use `select(_:_:bit:)` for secret ones.
        public static func select(_ ifTrue: Scalar, _ ifFalse: Scalar, condition: Bool) -> Scalar {
            let mask = 0 &- UInt64(condition ? 1 : 0)
            return Scalar(montgomery: (ifTrue.l0 & mask) | (ifFalse.l0 & ~mask),
                          (ifTrue.l1 & mask) | (ifFalse.l1 & ~mask),
                          (ifTrue.l2 & mask) | (ifFalse.l2 & ~mask),
                          (ifTrue.l3 & mask) | (ifFalse.l3 & ~mask))
        }
    }
}

extension Secp256k1.Scalar: Equatable {
    /// Constant-time comparison.
    public static func == (a: Self, b: Self) -> Bool {
        ((a.l0 ^ b.l0) | (a.l1 ^ b.l1) | (a.l2 ^ b.l2) | (a.l3 ^ b.l3)) == 0
    }
}

extension Secp256k1.Scalar: CustomStringConvertible, CustomDebugStringConvertible {
    /// Never shows the value.
    public var description: String { "Secp256k1.Scalar(redacted)" }
    public var debugDescription: String { description }
}
