/// Bit-vector helpers for the OT layers (DKLs23 spec §4: bit vectors are LSB-first; §6.7: KOS matrices).
enum Bits {
    /// Bit `index` of an LSB-first bit vector, as 0 or 1 (no branch).
    @inline(__always)
    static func bit(_ vector: [UInt8], _ index: Int) -> UInt64 {
        UInt64((vector[index >> 3] >> UInt8(index & 7)) & 1)
    }

    /// a ⊕ b (equal lengths).
    static func xor(_ a: [UInt8], _ b: [UInt8]) -> [UInt8] {
        var out = a
        for index in out.indices { out[index] ^= b[index] }
        return out
    }

    /// Constant-time select of equal-length byte strings: `ifOne` when `bit` is 1.
    static func select(_ ifOne: [UInt8], _ ifZero: [UInt8], bit: UInt64) -> [UInt8] {
        let mask = UInt8(truncatingIfNeeded: 0 &- (bit & 1))
        var out = ifZero
        for index in out.indices { out[index] = (ifOne[index] & mask) | (ifZero[index] & ~mask) }
        return out
    }

    /// Constant-time equality of equal-length byte strings.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }

    /// The columns of a matrix with `rows.count` ≤ 256 rows of `columnCount` bits each (LSB-first rows):
    /// column j is the 256-bit value whose bit b is entry (b, j).
    static func columns(ofRows rows: [[UInt8]], columnCount: Int) -> [GF256] {
        var limbs = [UInt64](repeating: 0, count: columnCount * 4)
        for (rowIndex, row) in rows.enumerated() {
            let limb = rowIndex >> 6
            let shift = UInt64(rowIndex & 63)
            for byteIndex in 0..<(columnCount >> 3) {
                let byte = row[byteIndex]
                let base = (byteIndex << 3) * 4 + limb
                for bitIndex in 0..<8 {
                    limbs[base + bitIndex * 4] |= UInt64((byte >> UInt8(bitIndex)) & 1) << shift
                }
            }
        }
        var out: [GF256] = []
        out.reserveCapacity(columnCount)
        for j in 0..<columnCount {
            out.append(GF256(l0: limbs[4 * j], l1: limbs[4 * j + 1], l2: limbs[4 * j + 2], l3: limbs[4 * j + 3]))
        }
        return out
    }
}
