import Foundation

/// An unsigned integer below 2²⁵⁶ (wei amounts, fees): big-endian bytes without leading zeros, as RLP
/// and JSON-RPC carry it.
public struct EthereumQuantity: Sendable, Hashable, ExpressibleByIntegerLiteral, CustomStringConvertible {
    /// Big-endian, no leading zeros; empty for 0; at most 32 bytes.
    public let bigEndian: Data

    public init(_ value: UInt64) { bigEndian = Data(RLP.minimalBigEndian(value)) }

    public init(integerLiteral value: UInt64) { self.init(value) }

    /// From big-endian bytes (leading zeros are dropped); more than 256 bits is `invalidEncoding`.
    public init(bigEndian bytes: Data) throws(ChainError) {
        let trimmed = bytes.drop { $0 == 0 }
        guard trimmed.count <= 32 else { throw .invalidEncoding(reason: "quantity above 2^256") }
        bigEndian = Data(trimmed)
    }

    /// From decimal digits ("1000000000000000000"); anything else is `invalidEncoding`.
    public init(decimal text: String) throws(ChainError) {
        guard !text.isEmpty, text.utf8.count <= 78, text.utf8.allSatisfy({ (48...57).contains($0) }) else {
            throw .invalidEncoding(reason: "not a decimal quantity")
        }
        var digits = [UInt8](repeating: 0, count: 33)   // little-endian accumulator
        for character in text.utf8 {
            var carry = UInt16(character - 48)
            for index in digits.indices {
                let value = UInt16(digits[index]) * 10 + carry
                digits[index] = UInt8(truncatingIfNeeded: value)
                carry = value >> 8
            }
        }
        try self.init(bigEndian: Data(digits.reversed()))
    }

    /// The value in decimal.
    public var decimal: String {
        var number = [UInt8](bigEndian)
        var out: [UInt8] = []
        while number.contains(where: { $0 != 0 }) {
            var remainder: UInt16 = 0
            for index in number.indices {
                let value = remainder << 8 | UInt16(number[index])
                number[index] = UInt8(value / 10)
                remainder = value % 10
            }
            out.append(48 + UInt8(remainder))
        }
        return out.isEmpty ? "0" : String(decoding: out.reversed(), as: UTF8.self)
    }

    public var description: String { decimal }

    var rlp: RLP.Item { .bytes(bigEndian) }

    /// From an RLP integer: canonical (no leading zero byte).
    init(rlp item: RLP.Item, field: String) throws(ChainError) {
        let bytes = try item.byteString(field)
        guard bytes.first != 0 else { throw .invalidEncoding(reason: "\(field): leading zero") }
        try self.init(bigEndian: bytes)
    }
}

extension UInt64 {
    /// From an RLP integer: canonical, at most 8 bytes.
    init(rlp item: RLP.Item, field: String) throws(ChainError) {
        let bytes = try item.byteString(field)
        guard bytes.first != 0, bytes.count <= 8 else { throw .invalidEncoding(reason: "\(field): not a canonical 64-bit integer") }
        self = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }
}
