/// An element of GF(2^256) = GF(2)[X] / (X^256 + X^10 + X^5 + X^2 + 1) (DKLs23 spec §6.6), bit b of
/// the 256-bit integer being the coefficient of X^b; encoded as 32 bytes little-endian.
struct GF256: Equatable, Sendable {
    var l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64

    static let zero = GF256(l0: 0, l1: 0, l2: 0, l3: 0)

    init(l0: UInt64, l1: UInt64, l2: UInt64, l3: UInt64) {
        self.l0 = l0; self.l1 = l1; self.l2 = l2; self.l3 = l3
    }

    /// From 32 little-endian bytes (the caller guarantees the length).
    init(littleEndian bytes: ArraySlice<UInt8>) {
        var limbs: [UInt64] = [0, 0, 0, 0]
        var index = bytes.startIndex
        for limb in 0..<4 {
            var value: UInt64 = 0
            for k in 0..<8 {
                value |= UInt64(bytes[index]) << UInt64(8 * k)
                index += 1
            }
            limbs[limb] = value
        }
        self.init(l0: limbs[0], l1: limbs[1], l2: limbs[2], l3: limbs[3])
    }

    init(littleEndian bytes: [UInt8]) { self.init(littleEndian: bytes[...]) }

    var bytes: [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(32)
        for limb in [l0, l1, l2, l3] {
            for k in 0..<8 { out.append(UInt8(truncatingIfNeeded: limb >> UInt64(8 * k))) }
        }
        return out
    }

    static func ^ (a: GF256, b: GF256) -> GF256 {
        GF256(l0: a.l0 ^ b.l0, l1: a.l1 ^ b.l1, l2: a.l2 ^ b.l2, l3: a.l3 ^ b.l3)
    }

    static func ^= (a: inout GF256, b: GF256) { a = a ^ b }

    /// `self` when `bit` is 1, zero when 0 (mask, no branch).
    func masked(by bit: UInt64) -> GF256 {
        let mask = 0 &- (bit & 1)
        return GF256(l0: l0 & mask, l1: l1 & mask, l2: l2 & mask, l3: l3 & mask)
    }

    /// The product `publicFactor ⊗ secret`. The loop branches on the bits of `publicFactor` only (in
    /// KOS the challenges χ are public), so the time is independent of `secret`.
    static func multiply(publicFactor: GF256, secret: GF256) -> GF256 {
        var accumulator = ProductAccumulator()
        accumulator.add(publicFactor: publicFactor, secret: secret)
        return accumulator.reduced()
    }

    /// Σ publicFactor_j ⊗ secret_j, reduced once at the end (carry-less products are linear).
    struct ProductAccumulator {
        private var r0: UInt64 = 0, r1: UInt64 = 0, r2: UInt64 = 0, r3: UInt64 = 0
        private var r4: UInt64 = 0, r5: UInt64 = 0, r6: UInt64 = 0, r7: UInt64 = 0

        /// Adds the unreduced carry-less product: a 4-bit window over the public factor, with a table
        /// of the 16 multiples of the secret (indexed by public nibbles only).
        mutating func add(publicFactor: GF256, secret: GF256) {
            withUnsafeTemporaryAllocation(of: UInt64.self, capacity: 16 * 5) { table in
                table.initialize(repeating: 0)
                table[5] = secret.l0; table[6] = secret.l1; table[7] = secret.l2; table[8] = secret.l3
                for k in 2..<16 {
                    let row = 5 * k
                    if k & 1 == 0 {
                        let half = 5 * (k / 2)
                        table[row] = table[half] << 1
                        for limb in 1..<5 { table[row + limb] = (table[half + limb] << 1) | (table[half + limb - 1] >> 63) }
                    } else {
                        let previous = row - 5
                        for limb in 0..<5 { table[row + limb] = table[previous + limb] ^ table[5 + limb] }
                    }
                }
                var a0: UInt64 = 0, a1: UInt64 = 0, a2: UInt64 = 0, a3: UInt64 = 0
                var a4: UInt64 = 0, a5: UInt64 = 0, a6: UInt64 = 0, a7: UInt64 = 0
                for word in [publicFactor.l3, publicFactor.l2, publicFactor.l1, publicFactor.l0] {
                    for nibble in stride(from: 60, through: 0, by: -4) {
                        a7 = (a7 << 4) | (a6 >> 60); a6 = (a6 << 4) | (a5 >> 60); a5 = (a5 << 4) | (a4 >> 60)
                        a4 = (a4 << 4) | (a3 >> 60); a3 = (a3 << 4) | (a2 >> 60); a2 = (a2 << 4) | (a1 >> 60)
                        a1 = (a1 << 4) | (a0 >> 60); a0 = a0 << 4
                        let row = 5 * Int((word >> UInt64(nibble)) & 0xF)
                        a0 ^= table[row]; a1 ^= table[row + 1]; a2 ^= table[row + 2]; a3 ^= table[row + 3]
                        a4 ^= table[row + 4]
                    }
                }
                r0 ^= a0; r1 ^= a1; r2 ^= a2; r3 ^= a3; r4 ^= a4; r5 ^= a5; r6 ^= a6; r7 ^= a7
            }
        }

        func reduced() -> GF256 {
            GF256.reduce(low: (r0, r1, r2, r3), high: (r4, r5, r6, r7))
        }
    }

    /// low ⊕ high·X^256 mod f, with X^256 ≡ X^10 + X^5 + X^2 + 1.
    static func reduce(low: (UInt64, UInt64, UInt64, UInt64), high: (UInt64, UInt64, UInt64, UInt64)) -> GF256 {
        // h·(1 + X^2 + X^5 + X^10) spills at most 10 bits above 2^256; fold that spill once more.
        func shifted(_ h: (UInt64, UInt64, UInt64, UInt64), _ s: UInt64) -> (UInt64, UInt64, UInt64, UInt64, UInt64) {
            (h.0 << s, (h.1 << s) | (h.0 >> (64 - s)), (h.2 << s) | (h.1 >> (64 - s)),
             (h.3 << s) | (h.2 >> (64 - s)), h.3 >> (64 - s))
        }
        let s2 = shifted(high, 2), s5 = shifted(high, 5), s10 = shifted(high, 10)
        var v0 = low.0 ^ high.0 ^ s2.0 ^ s5.0 ^ s10.0
        let v1 = low.1 ^ high.1 ^ s2.1 ^ s5.1 ^ s10.1
        let v2 = low.2 ^ high.2 ^ s2.2 ^ s5.2 ^ s10.2
        let v3 = low.3 ^ high.3 ^ s2.3 ^ s5.3 ^ s10.3
        let spill = s2.4 ^ s5.4 ^ s10.4  // < 2^10
        v0 ^= spill ^ (spill << 2) ^ (spill << 5) ^ (spill << 10)
        return GF256(l0: v0, l1: v1, l2: v2, l3: v3)
    }
}
