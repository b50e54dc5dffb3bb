/// An element of GF(2^128) = GF(2)[X] / (X^128 + X^7 + X^2 + X + 1), bit b of the 128-bit integer being
/// the coefficient of X^b; encoded as 16 bytes little-endian. The field of the per-row SoftSpokenOT
/// consistency check (dkls23.md §9.3, protocol v3).
struct GF128: Equatable, Sendable {
    var l0: UInt64, l1: UInt64

    static let zero = GF128(l0: 0, l1: 0)
    static let one = GF128(l0: 1, l1: 0)

    init(l0: UInt64, l1: UInt64) {
        self.l0 = l0
        self.l1 = l1
    }

    /// From 16 little-endian bytes (the caller guarantees the length).
    init(littleEndian bytes: ArraySlice<UInt8>) {
        var low: UInt64 = 0, high: UInt64 = 0
        let start = bytes.startIndex
        for k in 0..<8 {
            low |= UInt64(bytes[start + k]) << UInt64(8 * k)
            high |= UInt64(bytes[start + 8 + k]) << UInt64(8 * k)
        }
        self.init(l0: low, l1: high)
    }

    init(littleEndian bytes: [UInt8]) { self.init(littleEndian: bytes[...]) }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(16)
        appendBytes(to: &out)
        return out
    }

    func appendBytes(to out: inout [UInt8]) {
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: l0 >> UInt64(8 * k))) }
        for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: l1 >> UInt64(8 * k))) }
    }

    static func ^ (a: GF128, b: GF128) -> GF128 { GF128(l0: a.l0 ^ b.l0, l1: a.l1 ^ b.l1) }

    static func ^= (a: inout GF128, b: GF128) { a = a ^ b }

    /// `self` when `bit` is 1, zero when 0 (mask, no branch).
    func masked(by bit: UInt64) -> GF128 {
        let mask = 0 &- (bit & 1)
        return GF128(l0: l0 & mask, l1: l1 & mask)
    }

    /// The product `publicFactor ⊗ secret`; the time depends on `publicFactor` only.
    static func multiply(publicFactor: GF128, secret: GF128) -> GF128 {
        var accumulator = ProductAccumulator()
        accumulator.add(publicFactor: publicFactor, secret: secret)
        return accumulator.reduced()
    }

    /// Σ publicFactor_j ⊗ secret_j (plus plain terms), reduced once at the end.
    struct ProductAccumulator {
        private var r0: UInt64 = 0, r1: UInt64 = 0, r2: UInt64 = 0, r3: UInt64 = 0

        /// Adds the unreduced carry-less product: a 4-bit window over the public factor, with a table of
        /// the 16 multiples of the secret (indexed by public nibbles only, no branch on the secret).
        mutating func add(publicFactor: GF128, secret: GF128) {
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 16 * 3) { table in
                table.initialize(repeating: 0)
                table[3] = secret.l0; table[4] = secret.l1
                for k in 2..<16 {
                    let row = 3 * k
                    if k & 1 == 0 {
                        let half = 3 * (k / 2)
                        table[row] = table[half] << 1
                        table[row + 1] = (table[half + 1] << 1) | (table[half] >> 63)
                        table[row + 2] = (table[half + 2] << 1) | (table[half + 1] >> 63)
                    } else {
                        let previous = row - 3
                        for limb in 0..<3 { table[row + limb] = table[previous + limb] ^ table[3 + limb] }
                    }
                }
                var a0: UInt64 = 0, a1: UInt64 = 0, a2: UInt64 = 0, a3: UInt64 = 0
                for word in [publicFactor.l1, publicFactor.l0] {
                    for nibble in stride(from: 60, through: 0, by: -4) {
                        a3 = (a3 << 4) | (a2 >> 60); a2 = (a2 << 4) | (a1 >> 60)
                        a1 = (a1 << 4) | (a0 >> 60); a0 = a0 << 4
                        let row = 3 * Int((word >> UInt64(nibble)) & 0xF)
                        a0 ^= table[row]; a1 ^= table[row + 1]; a2 ^= table[row + 2]
                    }
                }
                r0 ^= a0; r1 ^= a1; r2 ^= a2; r3 ^= a3
            }
        }

        /// Adds a plain (coefficient 1) term.
        mutating func add(_ value: GF128) {
            r0 ^= value.l0
            r1 ^= value.l1
        }

        func reduced() -> GF128 { GF128.reduce(low: (r0, r1), high: (r2, r3)) }
    }

    /// low ⊕ high·X^128 mod f, with X^128 ≡ X^7 + X^2 + X + 1.
    static func reduce(low: (UInt64, UInt64), high: (UInt64, UInt64)) -> GF128 {
        // h·(1 + X + X^2 + X^7) spills at most 7 bits above 2^128; fold that spill once more.
        func shifted(_ s: UInt64) -> (UInt64, UInt64, UInt64) {
            (high.0 << s, (high.1 << s) | (high.0 >> (64 - s)), high.1 >> (64 - s))
        }
        let s1 = shifted(1), s2 = shifted(2), s7 = shifted(7)
        var v0 = low.0 ^ high.0 ^ s1.0 ^ s2.0 ^ s7.0
        let v1 = low.1 ^ high.1 ^ s1.1 ^ s2.1 ^ s7.1
        let spill = s1.2 ^ s2.2 ^ s7.2   // < 2^7
        v0 ^= spill ^ (spill << 1) ^ (spill << 2) ^ (spill << 7)
        return GF128(l0: v0, l1: v1)
    }
}
