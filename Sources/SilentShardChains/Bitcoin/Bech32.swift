/// Bech32 (BIP-173, <https://github.com/bitcoin/bips/blob/master/bip-0173.mediawiki>) and Bech32m
/// (BIP-350) encoding of segregated-witness addresses.
enum Bech32 {
    enum Variant { case bech32, bech32m }

    private static let charset = Array("qpzry9x8gf2tvdw0s3jn54khce6mua7l".utf8)

    private static func polymod(_ values: [UInt8]) -> UInt32 {
        let generator: [UInt32] = [0x3B6A_57B2, 0x2650_8E6D, 0x1EA1_19FA, 0x3D42_33DD, 0x2A14_62B3]
        var checksum: UInt32 = 1
        for value in values {
            let top = checksum >> 25
            checksum = (checksum & 0x1FF_FFFF) << 5 ^ UInt32(value)
            for i in 0..<5 where (top >> UInt32(i)) & 1 == 1 { checksum ^= generator[i] }
        }
        return checksum
    }

    private static func expand(_ hrp: [UInt8]) -> [UInt8] { hrp.map { $0 >> 5 } + [0] + hrp.map { $0 & 31 } }

    /// `hrp` + "1" + the 5-bit `data` and its checksum.
    static func encode(hrp: String, data: [UInt8], variant: Variant) -> String {
        let hrpBytes = Array(hrp.utf8)
        let constant: UInt32 = variant == .bech32 ? 1 : 0x2BC8_30A3
        let checksum = polymod(expand(hrpBytes) + data + [0, 0, 0, 0, 0, 0]) ^ constant
        let checksumWords = (0..<6).map { UInt8((checksum >> (5 * (5 - UInt32($0)))) & 31) }
        return hrp + "1" + String(decoding: (data + checksumWords).map { charset[Int($0)] }, as: UTF8.self)
    }

    /// Regroups bits (8 → 5 with padding).
    static func toFiveBit(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var accumulator: UInt32 = 0, bits: UInt32 = 0
        for byte in bytes {
            accumulator = accumulator << 8 | UInt32(byte)
            bits += 8
            while bits >= 5 {
                bits -= 5
                out.append(UInt8((accumulator >> bits) & 31))
            }
        }
        if bits > 0 { out.append(UInt8((accumulator << (5 - bits)) & 31)) }
        return out
    }

    /// A segwit address: witness version + program (BIP-173 for v0, BIP-350 for v1+).
    static func segwitAddress(hrp: String, version: UInt8, program: [UInt8]) -> String {
        encode(hrp: hrp, data: [version] + toFiveBit(program), variant: version == 0 ? .bech32 : .bech32m)
    }
}
