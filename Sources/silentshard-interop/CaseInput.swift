import SilentShardCore
import MPCCrypto

/// One element of a request's `cases`: an object with named fields, or a bare value (a hex string
/// for operations like `sha256` and `secp256k1-decode`). Accessors throw `InteropError`.
struct CaseInput: Sendable {
    let value: JSONValue

    /// The required hex field `key`, decoded.
    func bytes(_ key: String) throws(InteropError) -> [UInt8] {
        guard let bytes = try optionalBytes(key) else { throw .missingField(key) }
        return bytes
    }

    /// The hex field `key` as a fixed-size session value (instance id, setup hash).
    func identifier<Value: SessionBytes>(_ key: String, as type: Value.Type) throws(InteropError) -> Value {
        guard let value = Value(try bytes(key)) else {
            throw .wrongType(field: key, expected: "\(Value.byteCount) bytes of hex")
        }
        return value
    }

    /// The optional hex field `key`, decoded; `nil` when absent or null.
    func optionalBytes(_ key: String) throws(InteropError) -> [UInt8]? {
        guard let text = try optionalString(key) else { return nil }
        return try Self.decodeHex(text, field: key)
    }

    /// The required string field `key`.
    func string(_ key: String) throws(InteropError) -> String {
        guard let text = try optionalString(key) else { throw .missingField(key) }
        return text
    }

    /// The optional string field `key`.
    func optionalString(_ key: String) throws(InteropError) -> String? {
        switch try member(key) {
        case nil, .null?: return nil
        case .string(let text)?: return text
        case _?: throw .wrongType(field: key, expected: "string")
        }
    }

    /// The optional integer field `key`, which must lie in `range` when present.
    func optionalInt(_ key: String, in range: ClosedRange<Int>) throws(InteropError) -> Int? {
        switch try member(key) {
        case nil, .null?: return nil
        case .int(let number)?:
            guard range.contains(number) else { throw .outOfRange(field: key) }
            return number
        case _?: throw .wrongType(field: key, expected: "integer")
        }
    }

    /// The required integer field `key` in `range`.
    func int(_ key: String, in range: ClosedRange<Int>) throws(InteropError) -> Int {
        guard let number = try optionalInt(key, in: range) else { throw .missingField(key) }
        return number
    }

    /// The required field `key`: an array of integers, each in `range`.
    func ints(_ key: String, in range: ClosedRange<Int>) throws(InteropError) -> [Int] {
        guard let member = try member(key) else { throw .missingField(key) }
        guard case .array(let elements) = member else { throw .wrongType(field: key, expected: "array") }
        var out: [Int] = []
        for element in elements {
            guard case .int(let number) = element else { throw .wrongType(field: key, expected: "array of integers") }
            guard range.contains(number) else { throw .outOfRange(field: key) }
            out.append(number)
        }
        return out
    }

    /// The required field `key`: an array of hex strings, decoded.
    func byteArrays(_ key: String) throws(InteropError) -> [[UInt8]] {
        guard let member = try member(key) else { throw .missingField(key) }
        guard case .array(let elements) = member else { throw .wrongType(field: key, expected: "array") }
        var out: [[UInt8]] = []
        for element in elements {
            guard case .string(let text) = element else { throw .wrongType(field: key, expected: "array of hex strings") }
            out.append(try Self.decodeHex(text, field: key))
        }
        return out
    }

    /// The case itself as hex bytes: a bare hex string, or an object's `data` field.
    func hexBytes() throws(InteropError) -> [UInt8] {
        switch value {
        case .string(let text): return try Self.decodeHex(text, field: "case")
        case .object: return try bytes("data")
        default: throw .wrongType(field: "case", expected: "hex string or object")
        }
    }

    private func member(_ key: String) throws(InteropError) -> JSONValue? {
        guard case .object(let members) = value else { throw .wrongType(field: "case", expected: "object") }
        return members[key]
    }

    private static func decodeHex(_ text: String, field: String) throws(InteropError) -> [UInt8] {
        do {
            return try Hex.decode(text)
        } catch {
            throw .invalidHex(field: field)
        }
    }
}
