import Foundation
import MPCCrypto

/// The `eth_signTypedData_v4` JSON form (<https://eips.ethereum.org/EIPS/eip-712#specification-of-the-eth_signtypeddata-json-rpc>,
/// as MetaMask and eth-account read it): `{"types": {Name: [{"name", "type"}, …], …}, "primaryType": Name,
/// "domain": {…}, "message": {…}}`.
extension EthereumTypedData {
    /// Parses the v4 JSON strictly (`StrictJSON`: UTF-8, no duplicate keys, exact numbers), then checks it
    /// as `init(types:primaryType:domain:message:)` does. Refused (`invalidEncoding` unless an address
    /// says otherwise): keys other than the four above or a missing one, member objects with keys other
    /// than `name` and `type`, `null`s; `invalidTypedDataName` for a type name, `primaryType`, member name or
    /// key of `domain`, `message` or a nested struct value that is not an ASCII identifier (checked before it
    /// is looked up or stored; keys are compared by their bytes throughout). Values by type: `address` 0x + 40 hex digits (mixed case must be
    /// EIP-55); `bool` `true`/`false`; `uintN`/`intN` a JSON integer (no fraction or exponent), or a
    /// string of decimal digits with an optional `-`, or `0x` + hex digits; `bytes`/`bytesN` `0x` + an even
    /// number of hex digits; `string` a JSON string; arrays JSON arrays; structs JSON objects.
    public init(json: Data) throws(ChainError) {
        guard case .object(let members) = try StrictJSON.parse([UInt8](json)) else {
            throw .invalidEncoding(reason: "typed data: not a JSON object")
        }
        var fields: [String: StrictJSON.Value] = [:]
        for (key, value) in members {
            // By bytes: the four keys are then stored under their ASCII spelling only.
            guard let known = ["types", "primaryType", "domain", "message"].first(where: { $0.utf8.elementsEqual(key.utf8) }) else {
                throw .invalidEncoding(reason: "typed data: unknown key \(TypedDataText.quoted(key))")
            }
            fields[known] = value
        }
        func member(_ key: String) throws(ChainError) -> StrictJSON.Value {
            guard let value = fields[key] else { throw .invalidEncoding(reason: "typed data: missing \"\(key)\"") }
            return value
        }
        guard case .object(let typeMembers) = try member("types") else { throw .invalidEncoding(reason: "types: not an object") }
        var types: [String: [Field]] = [:]
        for (name, definition) in typeMembers {
            // An ASCII identifier before it is a key: distinct bytes are then distinct `String`s.
            _ = try TypedDataName(validating: name, at: "types")
            guard case .array(let entries) = definition else {
                throw .invalidEncoding(reason: "types.\(TypedDataText.quoted(name)): not an array")
            }
            var definitionFields: [Field] = []
            for entry in entries {
                guard case .object(let pair) = entry, pair.count == 2,
                      let nameValue = pair.first(where: { $0.key.utf8.elementsEqual("name".utf8) })?.value,
                      case .string(let fieldName) = nameValue,
                      let typeValue = pair.first(where: { $0.key.utf8.elementsEqual("type".utf8) })?.value,
                      case .string(let fieldType) = typeValue
                else { throw .invalidEncoding(reason: "types.\(TypedDataText.quoted(name)): members must be {\"name\": string, \"type\": string}") }
                definitionFields.append(Field(name: fieldName, type: fieldType))
            }
            types[name] = definitionFields
        }
        guard case .string(let primaryType) = try member("primaryType") else {
            throw .invalidEncoding(reason: "primaryType: not a string")
        }
        guard case .object(let domainMembers) = try member("domain") else { throw .invalidEncoding(reason: "domain: not an object") }
        let message = try member("message")
        let (allTypes, schema) = try Self.schema(types, domainIsEmpty: domainMembers.isEmpty)
        try Self.checkPrimaryType(primaryType, schema)
        guard case .structure(let domain) = try Self.value(.object(domainMembers), .structure(Self.domainName), schema, path: "domain"),
              case .structure(let messageValue) = try Self.value(message, .structure(TypedDataName(lookingUp: primaryType)), schema,
                                                                 path: "message")
        else { throw .invalidEncoding(reason: "typed data: domain and message must be objects") }
        try self.init(types: allTypes, schema: schema, primaryType: primaryType, domain: domain, message: messageValue)
    }

    /// Parses the v4 JSON text (see `init(json: Data)`).
    public init(json: String) throws(ChainError) { try self.init(json: Data(json.utf8)) }

    /// The v4 JSON, compact, in a stable order: `types` (sorted by name, members as defined),
    /// `primaryType`, `domain`, `message` (struct members as their type defines them). Integers below
    /// 2⁵³ are JSON numbers, larger ones decimal strings (exact in JavaScript too); addresses are EIP-55,
    /// bytes lowercase `0x` hex. Parsing it gives this value back.
    public var json: Data { Data(StrictJSON.serialize(jsonValue)) }

    /// `json` as text.
    public var jsonText: String { String(decoding: StrictJSON.serialize(jsonValue), as: UTF8.self) }

    private var jsonValue: StrictJSON.Value {
        let typeList: [(key: String, value: StrictJSON.Value)] = types.keys.sorted(by: TypedDataText.precedes).map { name in
            (name, .array((types[name] ?? []).map { .object([("name", .string($0.name)), ("type", .string($0.type))]) }))
        }
        return .object([
            ("types", .object(typeList)),
            ("primaryType", .string(primaryType)),
            ("domain", Self.json(.structure(domain), .structure(Self.domainName), schema)),
            ("message", Self.json(.structure(message), .structure(TypedDataName(lookingUp: primaryType)), schema)),
        ])
    }

    /// A JSON value read as `type`. Range and length checks are the encoder's. `path` (for error reasons) is
    /// only built when a reason needs it.
    static func value(_ json: StrictJSON.Value, _ type: TypedDataType, _ schema: TypedDataSchema,
                      path: @autoclosure () -> String) throws(ChainError) -> Value {
        switch (type, json) {
        case (.address, .string(let text)):
            return .address(try EthereumAddress(text))
        case (.bool, .bool(let flag)):
            return .bool(flag)
        case (.string, .string(let text)):
            return .string(text)
        case (.bytes, .string(let text)), (.fixedBytes, .string(let text)):
            let digits = Array(text.utf8)
            guard digits.starts(with: Array("0x".utf8)), let bytes = try? Hex.decode(String(decoding: digits.dropFirst(2), as: UTF8.self)) else {
                throw .invalidEncoding(reason: "\(path()): expected 0x and an even number of hex digits")
            }
            return .bytes(Data(bytes))
        case (.uint, .number(let text)), (.int, .number(let text)):
            return try integer(text, hexAllowed: false, path: path(), type: type)
        case (.uint, .string(let text)), (.int, .string(let text)):
            return try integer(text, hexAllowed: true, path: path(), type: type)
        case (.structure(let name), .object(let members)):
            guard let definition = schema.memberTypes[name] else { throw .invalidEncoding(reason: "unknown type \(TypedDataText.quoted(name.text))") }
            var values: [String: Value] = [:]
            for (key, item) in members {
                // An ASCII identifier before it is looked up or stored (`K` and U+212A must not meet).
                guard let memberType = definition[try TypedDataName(validating: key, at: path())] else {
                    throw .invalidEncoding(reason: "\(path()): unknown member \(TypedDataText.quoted(key)) for type \(name)")
                }
                values[key] = try value(item, memberType, schema, path: path() + "." + key)
            }
            return .structure(values)
        case (.array(let element, _), .array(let items)):
            var values: [Value] = []
            values.reserveCapacity(items.count)
            for (index, item) in items.enumerated() { values.append(try value(item, element, schema, path: "\(path())[\(index)]")) }
            return .array(values)
        default:
            throw .invalidEncoding(reason: "\(path()): expected a value of type \(type)")
        }
    }

    /// `-`? decimal digits, or (strings only) `0x` + hex digits: sign and magnitude below 2²⁵⁶.
    private static func integer(_ text: String, hexAllowed: Bool, path: @autoclosure () -> String,
                                type: TypedDataType) throws(ChainError) -> Value {
        var digits = Array(text.utf8)
        let negative = digits.first == UInt8(ascii: "-")
        if negative { digits.removeFirst() }
        let isDecimal: (UInt8) -> Bool = { (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
        let isHex: (UInt8) -> Bool = {
            isDecimal($0) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains($0) || (UInt8(ascii: "A")...UInt8(ascii: "F")).contains($0)
        }
        let magnitude: EthereumQuantity
        if hexAllowed, !negative, digits.starts(with: Array("0x".utf8)) {
            var hex = Array(digits.dropFirst(2))
            guard !hex.isEmpty, hex.allSatisfy(isHex) else { throw .invalidEncoding(reason: "\(path()): malformed integer") }
            hex = Self.withoutLeadingZeros(hex)
            guard hex.count <= 64 else { throw .invalidEncoding(reason: "\(path()): out of range for \(type)") }
            if hex.count % 2 == 1 { hex.insert(UInt8(ascii: "0"), at: 0) }
            guard let bytes = try? Hex.decode(String(decoding: hex, as: UTF8.self)) else {
                throw .invalidEncoding(reason: "\(path()): malformed integer")
            }
            magnitude = try EthereumQuantity(bigEndian: Data(bytes))
        } else {
            guard !digits.isEmpty, digits.allSatisfy(isDecimal) else { throw .invalidEncoding(reason: "\(path()): malformed integer") }
            digits = Self.withoutLeadingZeros(digits)
            guard digits.count <= 78, let parsed = try? EthereumQuantity(decimal: String(decoding: digits, as: UTF8.self)) else {
                throw .invalidEncoding(reason: "\(path()): out of range for \(type)")
            }
            magnitude = parsed
        }
        return .integer(negative: negative && !magnitude.bigEndian.isEmpty, magnitude: magnitude)
    }

    /// The digits without leading zeros ("0" stays), in one pass (a long run of zeros costs no more).
    private static func withoutLeadingZeros(_ digits: [UInt8]) -> [UInt8] {
        guard let first = digits.firstIndex(where: { $0 != UInt8(ascii: "0") }) else { return digits.isEmpty ? [] : [UInt8(ascii: "0")] }
        return Array(digits[first...])
    }

    /// `value` as JSON, read as `type` (struct members in their type's order).
    static func json(_ value: Value, _ type: TypedDataType, _ schema: TypedDataSchema) -> StrictJSON.Value {
        switch (type, value) {
        case (.structure(let name), .structure(let members)):
            let order = schema.structs[name] ?? []
            return .object(order.compactMap { member in
                members[member.name.text].map { (member.name.text, json($0, member.type, schema)) }
            })
        case (.array(let element, _), .array(let items)):
            return .array(items.map { json($0, element, schema) })
        default:
            switch value {
            case .address(let address): return .string(address.checksummed)
            case .bool(let flag): return .bool(flag)
            case .integer(let negative, let magnitude):
                let text = (negative ? "-" : "") + magnitude.decimal
                return TypedDataEncoder.bitLength(TypedDataEncoder.word(magnitude)) <= 53 ? .number(text) : .string(text)
            case .bytes(let bytes): return .string("0x" + Hex.encode([UInt8](bytes)))
            case .string(let text): return .string(text)
            case .array(let items): return .array(items.map { json($0, type, schema) })
            case .structure: return .object([])
            }
        }
    }
}
