/// Base58 with the Bitcoin alphabet (no checksum): Solana addresses and signatures. Variable time: only
/// for public data.
public enum Base58 {
    static let alphabet = Array("123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz".utf8)

    /// The base-58 text of `data` (each leading zero byte is a leading "1").
    public static func encode(_ data: [UInt8]) -> String {
        var digits: [UInt8] = []   // base-58 digits, least significant first
        for byte in data {
            var carry = Int(byte)
            for index in digits.indices {
                carry += Int(digits[index]) << 8
                digits[index] = UInt8(carry % 58)
                carry /= 58
            }
            while carry > 0 {
                digits.append(UInt8(carry % 58))
                carry /= 58
            }
        }
        let zeros = data.prefix { $0 == 0 }.count
        let characters = [UInt8](repeating: alphabet[0], count: zeros) + digits.reversed().map { alphabet[Int($0)] }
        return String(decoding: characters, as: UTF8.self)
    }

    /// The bytes of `text`, or nil for a character outside the alphabet or text longer than
    /// `maximumLength` characters (decoding is quadratic).
    public static func decode(_ text: String, maximumLength: Int = 256) -> [UInt8]? {
        guard text.utf8.count <= maximumLength else { return nil }
        var bytes: [UInt8] = []   // base-256 digits, least significant first
        for character in text.utf8 {
            guard let value = alphabet.firstIndex(of: character) else { return nil }
            var carry = value
            for index in bytes.indices {
                carry += Int(bytes[index]) * 58
                bytes[index] = UInt8(carry & 0xFF)
                carry >>= 8
            }
            while carry > 0 {
                bytes.append(UInt8(carry & 0xFF))
                carry >>= 8
            }
        }
        let zeros = text.utf8.prefix { $0 == alphabet[0] }.count
        return [UInt8](repeating: 0, count: zeros) + bytes.reversed()
    }
}

/// Base58Check (Bitcoin alphabet, 4-byte double-SHA-256 checksum), for BIP32 extended public keys and
/// P2PKH addresses. Variable time: only for public data.
public enum Base58Check {
    /// The checksum: the first 4 bytes of SHA-256(SHA-256(payload)).
    public static func checksum(_ payload: [UInt8]) -> [UInt8] {
        Array(SHA256.hash(SHA256.hash(payload)).prefix(4))
    }

    /// Base58 of payload ‖ checksum.
    public static func encode(_ payload: [UInt8]) -> String {
        Base58.encode(payload + checksum(payload))
    }

    /// The payload, or nil for a character outside the alphabet or a wrong checksum.
    public static func decode(_ text: String) -> [UInt8]? {
        guard let data = Base58.decode(text), data.count >= 4 else { return nil }
        let payload = Array(data.dropLast(4))
        guard Array(data.suffix(4)) == checksum(payload) else { return nil }
        return payload
    }
}
