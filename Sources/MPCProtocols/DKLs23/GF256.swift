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
        // Windowed: a table of the 16 products of `secret` with 4-bit polynomials, indexed by the
        // public factor's nibbles.
        var table = [(UInt64, UInt64, UInt64, UInt64, UInt64)](repeating: (0, 0, 0, 0, 0), count: 16)
        table[1] = (secret.l0, secret.l1, secret.l2, secret.l3, 0)
        for k in 2..<16 {
            if k & 1 == 0 {
                let h = table[k / 2]
                table[k] = (h.0 << 1, (h.1 << 1) | (h.0 >> 63), (h.2 << 1) | (h.1 >> 63),
                            (h.3 << 1) | (h.2 >> 63), (h.4 << 1) | (h.3 >> 63))
            } else {
                let a = table[k - 1]
                table[k] = (a.0 ^ secret.l0, a.1 ^ secret.l1, a.2 ^ secret.l2, a.3 ^ secret.l3, a.4)
            }
        }
        // 512-bit accumulator, most significant nibble of the public factor first.
        var r0: UInt64 = 0, r1: UInt64 = 0, r2: UInt64 = 0, r3: UInt64 = 0
        var r4: UInt64 = 0, r5: UInt64 = 0, r6: UInt64 = 0, r7: UInt64 = 0
        let factor = [publicFactor.l0, publicFactor.l1, publicFactor.l2, publicFactor.l3]
        for limb in (0..<4).reversed() {
            let word = factor[limb]
            for nibble in (0..<16).reversed() {
                // acc <<= 4
                r7 = (r7 << 4) | (r6 >> 60); r6 = (r6 << 4) | (r5 >> 60); r5 = (r5 << 4) | (r4 >> 60)
                r4 = (r4 << 4) | (r3 >> 60); r3 = (r3 << 4) | (r2 >> 60); r2 = (r2 << 4) | (r1 >> 60)
                r1 = (r1 << 4) | (r0 >> 60); r0 = r0 << 4
                let entry = table[Int((word >> UInt64(4 * nibble)) & 0xF)]
                r0 ^= entry.0; r1 ^= entry.1; r2 ^= entry.2; r3 ^= entry.3; r4 ^= entry.4
            }
        }
        return reduce(low: (r0, r1, r2, r3), high: (r4, r5, r6, r7))
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
