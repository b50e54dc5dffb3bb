import Foundation

/// Keccak-256 as Ethereum uses it: the Keccak submission's padding (`0x01 … 0x80`), not NIST SHA3-256's
/// (`0x06`). Rate 136 bytes, capacity 512 bits, 24 rounds of Keccak-f[1600]
/// (<https://keccak.team/keccak_specs_summary.html>). For public data only (addresses, message and
/// transaction hashes): it is not written to be constant-time.
public enum Keccak256 {
    /// The digest length in bytes.
    public static let byteCount = 32
    static let rate = 136

    /// The 32-byte Keccak-256 digest of `data`.
    public static func hash(_ data: Data) -> Data { Data(hash([UInt8](data))) }

    /// The 32-byte Keccak-256 digest of `bytes`.
    public static func hash(_ bytes: [UInt8]) -> [UInt8] {
        var state = [UInt64](repeating: 0, count: 25)
        var offset = 0
        while bytes.count - offset >= rate {
            absorb(bytes[offset..<(offset + rate)], into: &state)
            offset += rate
        }
        var last = [UInt8](bytes[offset...])
        last.append(0x01)
        last += [UInt8](repeating: 0, count: rate - last.count)
        last[rate - 1] |= 0x80
        absorb(last[...], into: &state)
        var out = [UInt8]()
        out.reserveCapacity(byteCount)
        for lane in state.prefix(byteCount / 8) {
            for shift in stride(from: 0, to: 64, by: 8) { out.append(UInt8(truncatingIfNeeded: lane >> UInt64(shift))) }
        }
        return out
    }

    private static func absorb(_ block: ArraySlice<UInt8>, into state: inout [UInt64]) {
        var index = block.startIndex
        for lane in 0..<(rate / 8) {
            var value: UInt64 = 0
            for byte in 0..<8 { value |= UInt64(block[index + byte]) << UInt64(8 * byte) }
            state[lane] ^= value
            index += 8
        }
        permute(&state)
    }

    private static let roundConstants: [UInt64] = [
        0x0000_0000_0000_0001, 0x0000_0000_0000_8082, 0x8000_0000_0000_808A, 0x8000_0000_8000_8000,
        0x0000_0000_0000_808B, 0x0000_0000_8000_0001, 0x8000_0000_8000_8081, 0x8000_0000_0000_8009,
        0x0000_0000_0000_008A, 0x0000_0000_0000_0088, 0x0000_0000_8000_8009, 0x0000_0000_8000_000A,
        0x0000_0000_8000_808B, 0x8000_0000_0000_008B, 0x8000_0000_0000_8089, 0x8000_0000_0000_8003,
        0x8000_0000_0000_8002, 0x8000_0000_0000_0080, 0x0000_0000_0000_800A, 0x8000_0000_8000_000A,
        0x8000_0000_8000_8081, 0x8000_0000_0000_8080, 0x0000_0000_8000_0001, 0x8000_0000_8000_8008,
    ]

    /// ρ rotation offsets, indexed by lane x + 5y.
    private static let rotations: [UInt64] = [
        0, 1, 62, 28, 27,
        36, 44, 6, 55, 20,
        3, 10, 43, 25, 39,
        41, 45, 15, 21, 8,
        18, 2, 61, 56, 14,
    ]

    private static func rotate(_ value: UInt64, _ count: UInt64) -> UInt64 {
        count == 0 ? value : (value << count) | (value >> (64 - count))
    }

    /// Keccak-f[1600]: θ, ρ and π, χ, ι for 24 rounds.
    private static func permute(_ a: inout [UInt64]) {
        var b = [UInt64](repeating: 0, count: 25)
        var c = [UInt64](repeating: 0, count: 5)
        for round in 0..<24 {
            for x in 0..<5 { c[x] = a[x] ^ a[x + 5] ^ a[x + 10] ^ a[x + 15] ^ a[x + 20] }
            for x in 0..<5 {
                let d = c[(x + 4) % 5] ^ rotate(c[(x + 1) % 5], 1)
                for y in stride(from: 0, to: 25, by: 5) { a[x + y] ^= d }
            }
            // ρ and π: B[y, 2x + 3y] = rot(A[x, y], r[x, y]).
            for x in 0..<5 {
                for y in 0..<5 {
                    b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(a[x + 5 * y], rotations[x + 5 * y])
                }
            }
            for y in stride(from: 0, to: 25, by: 5) {
                for x in 0..<5 { a[x + y] = b[x + y] ^ (~b[(x + 1) % 5 + y] & b[(x + 2) % 5 + y]) }
            }
            a[0] ^= roundConstants[round]
        }
    }
}
