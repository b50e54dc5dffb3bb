/// Hexadecimal encoding of byte strings (public values only: not constant time).
public enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// Lower-case hex of the bytes.
    public static func encode<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        var out: [UInt8] = []
        for byte in bytes {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// Decodes hex (either case, no prefix or separators).
    public static func decode(_ text: String) throws(CryptoError) -> [UInt8] {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0 else { throw .invalidHex }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var index = 0
        while index < chars.count {
            guard let high = value(chars[index]), let low = value(chars[index + 1]) else { throw .invalidHex }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    private static func value(_ char: UInt8) -> UInt8? {
        switch char {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return char - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return char - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return char - UInt8(ascii: "A") + 10
        default: return nil
        }
    }
}
