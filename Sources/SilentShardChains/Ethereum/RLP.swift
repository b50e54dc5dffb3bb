import Foundation

/// Recursive Length Prefix encoding (Ethereum Yellow Paper, appendix B;
/// <https://ethereum.org/en/developers/docs/data-structures-and-encoding/rlp/>). Decoding is strict:
/// only the canonical encoding of an item is accepted (a single byte below 0x80 encoded as itself, the
/// shortest length form, no leading zeros in lengths), with no trailing bytes and at most 32 levels of
/// nesting; anything else is `ChainError.invalidEncoding`.
public enum RLP {
    /// An RLP item: a byte string or a list of items.
    public indirect enum Item: Sendable, Equatable {
        case bytes(Data)
        case list([Item])

        /// An unsigned integer as RLP wants it: big-endian, no leading zeros (0 is the empty string).
        public static func uint(_ value: UInt64) -> Item { .bytes(Data(minimalBigEndian(value))) }
    }

    static let maximumDepth = 32

    /// The encoding of `item`.
    public static func encode(_ item: Item) -> Data {
        switch item {
        case .bytes(let bytes):
            if bytes.count == 1, let byte = bytes.first, byte < 0x80 { return bytes }
            return lengthPrefix(bytes.count, offset: 0x80) + bytes
        case .list(let items):
            let body = items.reduce(into: Data()) { $0 += encode($1) }
            return lengthPrefix(body.count, offset: 0xC0) + body
        }
    }

    /// The single item `data` encodes (strict, see above).
    public static func decode(_ data: Data) throws(ChainError) -> Item {
        let bytes = [UInt8](data)
        var offset = 0
        let item = try decodeItem(bytes, at: &offset, depth: 0)
        guard offset == bytes.count else { throw .invalidEncoding(reason: "RLP: trailing bytes") }
        return item
    }

    private static func lengthPrefix(_ length: Int, offset: UInt8) -> Data {
        if length < 56 { return Data([offset + UInt8(length)]) }
        let lengthBytes = minimalBigEndian(UInt64(length))
        return Data([offset + 55 + UInt8(lengthBytes.count)] + lengthBytes)
    }

    static func minimalBigEndian(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        var rest = value
        while rest > 0 {
            bytes.insert(UInt8(truncatingIfNeeded: rest), at: 0)
            rest >>= 8
        }
        return bytes
    }

    private static func decodeItem(_ bytes: [UInt8], at offset: inout Int, depth: Int) throws(ChainError) -> Item {
        guard depth <= maximumDepth else { throw .invalidEncoding(reason: "RLP: nested too deeply") }
        guard offset < bytes.count else { throw .invalidEncoding(reason: "RLP: truncated") }
        let prefix = bytes[offset]
        offset += 1
        switch prefix {
        case 0x00..<0x80:
            return .bytes(Data([prefix]))
        case 0x80..<0xC0:
            let length = try payloadLength(prefix: prefix, base: 0x80, bytes, at: &offset)
            let payload = try take(length, from: bytes, at: &offset)
            if length == 1, payload[0] < 0x80 { throw .invalidEncoding(reason: "RLP: single byte not encoded as itself") }
            return .bytes(Data(payload))
        default:
            let length = try payloadLength(prefix: prefix, base: 0xC0, bytes, at: &offset)
            guard bytes.count - offset >= length else { throw .invalidEncoding(reason: "RLP: truncated") }
            let end = offset + length
            var items: [Item] = []
            while offset < end { items.append(try decodeItem(bytes, at: &offset, depth: depth + 1)) }
            guard offset == end else { throw .invalidEncoding(reason: "RLP: list length mismatch") }
            return .list(items)
        }
    }

    /// The payload length after a prefix in [base, base + 64): short form below base + 56, else the
    /// big-endian length that follows (shortest form, ≥ 56).
    private static func payloadLength(prefix: UInt8, base: UInt8, _ bytes: [UInt8], at offset: inout Int) throws(ChainError) -> Int {
        let short = Int(prefix - base)
        if short < 56 { return short }
        let count = short - 55
        let lengthBytes = try take(count, from: bytes, at: &offset)
        guard lengthBytes[0] != 0 else { throw .invalidEncoding(reason: "RLP: leading zero in a length") }
        guard count <= 4 else { throw .invalidEncoding(reason: "RLP: length too large") }
        let length = lengthBytes.reduce(0) { $0 << 8 | Int($1) }
        guard length >= 56 else { throw .invalidEncoding(reason: "RLP: long form for a short length") }
        return length
    }

    private static func take(_ count: Int, from bytes: [UInt8], at offset: inout Int) throws(ChainError) -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw .invalidEncoding(reason: "RLP: truncated") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }
}

extension RLP.Item {
    /// The byte string, or `invalidEncoding` for a list.
    func byteString(_ field: String) throws(ChainError) -> Data {
        guard case .bytes(let bytes) = self else { throw .invalidEncoding(reason: "\(field): expected a byte string") }
        return bytes
    }

    /// The list, or `invalidEncoding` for a byte string.
    func items(_ field: String) throws(ChainError) -> [RLP.Item] {
        guard case .list(let items) = self else { throw .invalidEncoding(reason: "\(field): expected a list") }
        return items
    }
}
