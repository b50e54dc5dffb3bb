/// Bit-vector helpers for the OT layers (DKLs23 spec §4: bit vectors are LSB-first; §6.7: OT-extension matrices).
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

    /// The columns of a matrix with `rows.count` ≤ 256 rows (a multiple of 8) of `columnCount` bits
    /// each (LSB-first rows, `columnCount / 8` bytes each): column j is the 256-bit value whose bit b is
    /// entry (b, j). Works on 8×8 bit blocks (three mask-and-shift steps per block).
    static func columns(ofRows rows: [[UInt8]], columnCount: Int) -> [GF256] {
        let byteColumns = columnCount >> 3
        var limbs = [UInt64](repeating: 0, count: columnCount * 4)
        limbs.withUnsafeMutableBufferPointer { out in
            for group in 0..<(rows.count >> 3) {
                let limb = group >> 3
                let shift = UInt64((group & 7) * 8)
                let block = rows[(8 * group)..<(8 * group + 8)]
                for k in 0..<byteColumns {
                    // Byte r of x is row (8·group + r)'s byte k: bit 8r + c is entry (row r, column 8k + c).
                    var x: UInt64 = 0
                    for (r, row) in block.enumerated() { x |= UInt64(row[k]) << UInt64(8 * r) }
                    // Transpose the 8×8 bit matrix: bit 8r + c moves to bit 8c + r.
                    var t = (x ^ (x >> 7)) & 0x00AA_00AA_00AA_00AA
                    x = x ^ t ^ (t << 7)
                    t = (x ^ (x >> 14)) & 0x0000_CCCC_0000_CCCC
                    x = x ^ t ^ (t << 14)
                    t = (x ^ (x >> 28)) & 0x0000_0000_F0F0_F0F0
                    x = x ^ t ^ (t << 28)
                    for c in 0..<8 {
                        out[(8 * k + c) * 4 + limb] |= ((x >> UInt64(8 * c)) & 0xFF) << shift
                    }
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
