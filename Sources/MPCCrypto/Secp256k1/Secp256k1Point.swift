internal import CSecp256k1

extension Secp256k1 {
    /// A point of secp256k1, possibly the identity. Arithmetic comes from libsecp256k1.
    ///
    /// The identity has no encoding (DKLs23 spec §4): `compressed` throws for it, and decoding never
    /// yields it. Every decoded point is checked to be on the curve; hybrid encodings (0x06/0x07) are
    /// rejected.
    public struct Point: Sendable {
        /// `nil` is the identity.
        let key: secp256k1_pubkey?

        init(key: secp256k1_pubkey?) { self.key = key }

        /// The identity (point at infinity).
        public static let identity = Point(key: nil)

        /// The generator G.
        public static let generator = Point(base: .one)

        /// Whether this is the identity.
        public var isIdentity: Bool { key == nil }

        /// Decodes a SEC1 encoding: 33-byte compressed (0x02/0x03) or 65-byte uncompressed (0x04).
        public init<Bytes: Collection<UInt8>>(bytes: Bytes) throws(CryptoError) {
            let input = Array(bytes)
            switch (input.count, input.first) {
            case (33, 0x02), (33, 0x03), (65, 0x04): break
            case (33, _), (65, _): throw .invalidPointEncoding
            default: throw .invalidLength(expected: 33, actual: input.count)
            }
            var key = secp256k1_pubkey()
            guard secp256k1_ec_pubkey_parse(Secp256k1Context.shared.pointer, &key, input, input.count) == 1 else {
                throw .invalidPointEncoding
            }
            self.key = key
        }

        /// Decodes exactly a 33-byte compressed encoding.
        public init<Bytes: Collection<UInt8>>(compressed bytes: Bytes) throws(CryptoError) {
            guard bytes.count == 33 else { throw .invalidLength(expected: 33, actual: bytes.count) }
            try self.init(bytes: bytes)
        }

        /// scalar·G, constant time in the scalar (libsecp256k1's `ecmult_gen`).
        public init(base scalar: Scalar) {
            var key = secp256k1_pubkey()
            let secret = scalar.bytes
            if secp256k1_ec_pubkey_create(Secp256k1Context.shared.pointer, &key, secret) == 1 {
                self.key = key
            } else {
                self.key = nil  // only the zero scalar is rejected
            }
        }

        /// The 33-byte compressed SEC1 encoding. The identity has none.
        public func compressed() throws(CryptoError) -> [UInt8] {
            try serialize(count: 33, flags: silentshard_secp256k1_ec_compressed())
        }

        /// The 65-byte uncompressed SEC1 encoding. The identity has none.
        public func uncompressed() throws(CryptoError) -> [UInt8] {
            try serialize(count: 65, flags: silentshard_secp256k1_ec_uncompressed())
        }

        private func serialize(count: Int, flags: UInt32) throws(CryptoError) -> [UInt8] {
            guard var key else { throw .identityPoint }
            var out = [UInt8](repeating: 0, count: count)
            var length = count
            _ = secp256k1_ec_pubkey_serialize(Secp256k1Context.shared.pointer, &out, &length, &key, flags)
            return out
        }

        /// Point addition (either operand may be the identity; P + (−P) is the identity).
        public static func + (lhs: Point, rhs: Point) -> Point {
            guard let a = lhs.key else { return rhs }
            guard let b = rhs.key else { return lhs }
            var result = secp256k1_pubkey()
            let combined: Int32 = withUnsafePointer(to: a) { pa in
                withUnsafePointer(to: b) { pb in
                    let keys: [UnsafePointer<secp256k1_pubkey>?] = [pa, pb]
                    return secp256k1_ec_pubkey_combine(Secp256k1Context.shared.pointer, &result, keys, 2)
                }
            }
            return combined == 1 ? Point(key: result) : .identity
        }

        /// The additive inverse.
        public static prefix func - (point: Point) -> Point {
            guard var key = point.key else { return .identity }
            _ = secp256k1_ec_pubkey_negate(Secp256k1Context.shared.pointer, &key)
            return Point(key: key)
        }

        /// Point subtraction.
        public static func - (lhs: Point, rhs: Point) -> Point { lhs + (-rhs) }

        /// scalar·P, constant time in the scalar: libsecp256k1's ECDH (`ecmult_const`) with a hash
        /// callback that returns the raw x‖y. (`pubkey_tweak_mul` is variable-time; not used.)
        public static func * (scalar: Scalar, point: Point) -> Point {
            guard var key = point.key, !scalar.isZero else { return .identity }
            var xy = [UInt8](repeating: 0, count: 64)
            let secret = scalar.bytes
            let ok = secp256k1_ecdh(Secp256k1Context.shared.pointer, &xy, &key, secret, copyCoordinates, nil)
            guard ok == 1 else { return .identity }
            var uncompressed: [UInt8] = [0x04]
            uncompressed.append(contentsOf: xy)
            var result = secp256k1_pubkey()
            guard secp256k1_ec_pubkey_parse(Secp256k1Context.shared.pointer, &result, uncompressed, 65) == 1 else {
                return .identity
            }
            return Point(key: result)
        }

        /// P·scalar, the same as scalar·P.
        public static func * (point: Point, scalar: Scalar) -> Point { scalar * point }

        public static func += (lhs: inout Point, rhs: Point) { lhs = lhs + rhs }
    }
}

/// ECDH hash callback that copies the shared point's coordinates out unhashed.
private let copyCoordinates: secp256k1_ecdh_hash_function = { output, x, y, _ in
    guard let output, let x, let y else { return 0 }
    output.update(from: x, count: 32)
    (output + 32).update(from: y, count: 32)
    return 1
}

extension Secp256k1.Point: Equatable {
    public static func == (lhs: Self, rhs: Self) -> Bool {
        switch (lhs.key, rhs.key) {
        case (nil, nil): return true
        case (nil, _), (_, nil): return false
        case (var a?, var b?): return secp256k1_ec_pubkey_cmp(Secp256k1Context.shared.pointer, &a, &b) == 0
        }
    }
}

extension Secp256k1.Point: CustomStringConvertible {
    /// The compressed encoding in hex (points are public), or "identity".
    public var description: String {
        guard let bytes = try? compressed() else { return "Secp256k1.Point(identity)" }
        return "Secp256k1.Point(\(Hex.encode(bytes)))"
    }
}
