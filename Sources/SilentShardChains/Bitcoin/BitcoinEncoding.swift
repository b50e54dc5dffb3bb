import Foundation
import MPCCrypto

/// A cursor over outside bytes in Bitcoin's network serialization: little-endian integers and
/// CompactSize lengths (<https://en.bitcoin.it/wiki/Protocol_documentation#Variable_length_integer>),
/// read strictly: a CompactSize must use its shortest form, and no read goes past the end (every failure
/// is `ChainError.invalidEncoding` naming `what` was being read).
struct BitcoinReader {
    let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }
    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte(_ what: String) throws(ChainError) -> UInt8 {
        guard offset < bytes.count else { throw .invalidEncoding(reason: "\(what): truncated") }
        defer { offset += 1 }
        return bytes[offset]
    }

    mutating func take(_ count: Int, _ what: String) throws(ChainError) -> [UInt8] {
        guard count >= 0, remaining >= count else { throw .invalidEncoding(reason: "\(what): truncated") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// The next byte without consuming it, or nil at the end.
    func peek() -> UInt8? { offset < bytes.count ? bytes[offset] : nil }

    mutating func uint32(_ what: String) throws(ChainError) -> UInt32 {
        try take(4, what).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    mutating func uint64(_ what: String) throws(ChainError) -> UInt64 {
        try take(8, what).reversed().reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// A CompactSize in its shortest form.
    mutating func compactSize(_ what: String) throws(ChainError) -> UInt64 {
        let first = try byte(what)
        let value: UInt64, minimum: UInt64
        switch first {
        case 0..<0xFD: return UInt64(first)
        case 0xFD: value = UInt64(try take(2, what).reversed().reduce(0) { $0 << 8 | UInt16($1) }); minimum = 0xFD
        case 0xFE: value = UInt64(try uint32(what)); minimum = 0x1_0000
        default: value = try uint64(what); minimum = 0x1_0000_0000
        }
        guard value >= minimum else { throw .invalidEncoding(reason: "\(what): non-minimal CompactSize") }
        return value
    }

    /// A CompactSize count of items that each take at least `itemSize` bytes of what remains (so a count
    /// can never ask for more than the input holds).
    mutating func count(_ what: String, itemSize: Int) throws(ChainError) -> Int {
        let value = try compactSize(what)
        guard value <= UInt64(remaining / max(itemSize, 1)) else { throw .invalidEncoding(reason: "\(what): count exceeds the data") }
        return Int(value)
    }

    /// A CompactSize length and that many bytes.
    mutating func lengthPrefixed(_ what: String) throws(ChainError) -> [UInt8] {
        try take(count(what, itemSize: 1), what)
    }
}

/// Writers for the same serialization, and Bitcoin's hash functions.
enum BitcoinEncoding {
    static func compactSize(_ value: Int) -> [UInt8] { compactSize64(UInt64(value)) }

    static func compactSize64(_ value: UInt64) -> [UInt8] {
        switch value {
        case ..<0xFD: return [UInt8(value)]
        case ..<0x1_0000: return [0xFD] + littleEndian(value, count: 2)
        case ..<0x1_0000_0000: return [0xFE] + littleEndian(value, count: 4)
        default: return [0xFF] + littleEndian(value, count: 8)
        }
    }

    static func littleEndian(_ value: UInt64, count: Int) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: value >> (8 * UInt64($0))) }
    }

    static func lengthPrefixed(_ bytes: [UInt8]) -> [UInt8] { compactSize(bytes.count) + bytes }

    /// SHA-256(SHA-256(bytes)), Bitcoin's HASH256.
    static func hash256(_ bytes: [UInt8]) -> [UInt8] { SHA256.hash(SHA256.hash(bytes)) }

    /// RIPEMD-160(SHA-256(bytes)), Bitcoin's HASH160.
    static func hash160(_ bytes: [UInt8]) -> [UInt8] { RIPEMD160.hash(SHA256.hash(bytes)) }
}
