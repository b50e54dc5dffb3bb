import Foundation

/// EIP-712 `encodeData` (<https://eips.ethereum.org/EIPS/eip-712#definition-of-encodedata>): each member
/// as one 32-byte word — `bool`, `address`, `uintN` and `intN` as `uint256`/`int256` (big-endian, two's
/// complement for negatives), `bytesN` right-padded with zeros, `bytes` and `string` as the Keccak-256 of
/// their bytes (UTF-8 for text), a struct as its `hashStruct`, an array as the Keccak-256 of its items'
/// encodings concatenated. Values are checked against their types as they are encoded.
struct TypedDataEncoder {
    let schema: TypedDataSchema
    private var typeHashes: [TypedDataName: Data] = [:]

    init(schema: TypedDataSchema) { self.schema = schema }

    mutating func typeHash(_ name: TypedDataName) throws(ChainError) -> Data {
        if let known = typeHashes[name] { return known }
        let hash = Keccak256.hash(Data(try schema.encodeType(name).utf8))
        typeHashes[name] = hash
        return hash
    }

    mutating func hashStruct(_ name: TypedDataName, _ value: [String: EthereumTypedData.Value],
                             path: @autoclosure () -> String) throws(ChainError) -> Data {
        Keccak256.hash(try encodeData(name, value, path: path()))
    }

    /// `path` (where the value sits, for error reasons) is only built when a reason needs it. The value's keys
    /// must be ASCII identifiers (`invalidTypedDataName`): they are looked up by their bytes.
    mutating func encodeData(_ name: TypedDataName, _ value: [String: EthereumTypedData.Value],
                             path: @autoclosure () -> String) throws(ChainError) -> Data {
        guard let members = schema.structs[name], let types = schema.memberTypes[name] else {
            throw .invalidEncoding(reason: "unknown type \(TypedDataText.quoted(name.text))")
        }
        let keyed = try TypedDataName.keyed(value, at: path())
        if let unknown = keyed.keys.filter({ types[$0] == nil }).min() {
            throw .invalidEncoding(reason: "\(path()): unknown member \(TypedDataText.quoted(unknown.text)) for type \(name)")
        }
        var out = try typeHash(name)
        for member in members {
            guard let item = keyed[member.name] else { throw .invalidEncoding(reason: "\(path()).\(member.name): missing") }
            out += try encode(item, as: member.type, path: path() + "." + member.name.text)
        }
        return out
    }

    /// One member's 32-byte word.
    mutating func encode(_ value: EthereumTypedData.Value, as type: TypedDataType, path: @autoclosure () -> String) throws(ChainError) -> Data {
        switch (type, value) {
        case (.address, .address(let address)):
            return Data(count: 12) + address.bytes
        case (.bool, .bool(let flag)):
            return Data(count: 31) + [flag ? 1 : 0]
        case (.string, .string(let text)):
            return Keccak256.hash(Data(text.utf8))
        case (.bytes, .bytes(let bytes)):
            return Keccak256.hash(bytes)
        case (.fixedBytes(let count), .bytes(let bytes)):
            guard bytes.count == count else { throw .invalidEncoding(reason: "\(path()): not \(count) bytes") }
            return bytes + Data(count: 32 - count)
        case (.uint(let bits), .integer(let negative, let magnitude)):
            let word = Self.word(magnitude)
            guard !negative || magnitude.bigEndian.isEmpty, Self.bitLength(word) <= bits else {
                throw .invalidEncoding(reason: "\(path()): out of range for \(type)")
            }
            return Data(word)
        case (.int(let bits), .integer(let negative, let magnitude)):
            let word = Self.word(magnitude)
            if !negative || magnitude.bigEndian.isEmpty {
                guard Self.bitLength(word) < bits else { throw .invalidEncoding(reason: "\(path()): out of range for \(type)") }
                return Data(word)
            }
            // -m in two's complement is ~(m - 1); -m fits in N bits when m - 1 < 2^(N-1).
            let minusOne = Self.decrement(word)
            guard Self.bitLength(minusOne) < bits else { throw .invalidEncoding(reason: "\(path()): out of range for \(type)") }
            return Data(minusOne.map { ~$0 })
        case (.structure(let name), .structure(let members)):
            return try hashStruct(name, members, path: path())
        case (.array(let element, let length), .array(let items)):
            if let length, items.count != length { throw .invalidEncoding(reason: "\(path()): not \(length) items") }
            var concatenated = Data()
            concatenated.reserveCapacity(32 * items.count)
            for (index, item) in items.enumerated() {
                concatenated += try encode(item, as: element, path: "\(path())[\(index)]")
            }
            return Keccak256.hash(concatenated)
        default:
            throw .invalidEncoding(reason: "\(path()): expected a value of type \(type)")
        }
    }

    /// The magnitude as 32 big-endian bytes (an `EthereumQuantity` has at most 32).
    static func word(_ magnitude: EthereumQuantity) -> [UInt8] {
        [UInt8](repeating: 0, count: 32 - magnitude.bigEndian.count) + [UInt8](magnitude.bigEndian)
    }

    static func bitLength(_ word: [UInt8]) -> Int {
        guard let index = word.firstIndex(where: { $0 != 0 }) else { return 0 }
        return (word.count - index) * 8 - word[index].leadingZeroBitCount
    }

    /// `word - 1` for a non-zero 256-bit word.
    static func decrement(_ word: [UInt8]) -> [UInt8] {
        var out = word
        for index in out.indices.reversed() {
            if out[index] != 0 {
                out[index] -= 1
                break
            }
            out[index] = 0xFF
        }
        return out
    }
}

extension TypedDataType: CustomStringConvertible {
    /// The canonical spelling (`uint256`, `Person`, `bytes32[2][]`).
    var description: String {
        switch self {
        case .address: "address"
        case .bool: "bool"
        case .string: "string"
        case .bytes: "bytes"
        case .fixedBytes(let count): "bytes\(count)"
        case .uint(let bits): "uint\(bits)"
        case .int(let bits): "int\(bits)"
        case .structure(let name): name.text
        case .array(let element, let length): "\(element)[\(length.map(String.init) ?? "")]"
        }
    }
}
