import Foundation

/// One EIP-712 member type (<https://eips.ethereum.org/EIPS/eip-712#definition-of-typed-structured-data-𝕊>):
/// an atomic type, `string`, `bytes`, a struct type by name, or an array of any of these.
indirect enum TypedDataType: Sendable, Equatable {
    case address
    case bool
    case string
    case bytes
    /// `bytes1` … `bytes32`.
    case fixedBytes(Int)
    /// `uint8` … `uint256`, step 8.
    case uint(bits: Int)
    /// `int8` … `int256`, step 8 (two's complement).
    case int(bits: Int)
    /// A struct type defined in `types`.
    case structure(TypedDataName)
    /// `T[]` (length nil) or `T[k]`, k ≥ 1.
    case array(TypedDataType, length: Int?)

    static let maximumDimensions = 32

    /// Parses a member type as written (`uint256`, `Person`, `Person[2][]`): canonical only — no spaces,
    /// no leading zeros in lengths, `uint`/`int` spelled with their width; struct names are checked by
    /// the caller against the defined types.
    init(parsing text: String) throws(ChainError) {
        var base = Array(text.utf8)
        var lengths: [Int?] = []
        while base.last == UInt8(ascii: "]") {
            guard let open = base.lastIndex(of: UInt8(ascii: "[")) else { throw TypedDataText.badType(text) }
            let digits = base[(open + 1)..<(base.count - 1)]
            if digits.isEmpty {
                lengths.append(nil)
            } else {
                guard digits.count <= 9, digits.first != UInt8(ascii: "0"),
                      digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
                else { throw TypedDataText.badType(text) }
                lengths.append(digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) })
            }
            base.removeSubrange(open...)
            guard lengths.count <= Self.maximumDimensions else {
                throw .invalidEncoding(reason: "type \(TypedDataText.quoted(text)): too many array dimensions")
            }
        }
        let name = String(decoding: base, as: UTF8.self)
        var type: TypedDataType
        if let atomic = try Self.atomic(name) {
            type = atomic
        } else {
            guard TypedDataText.isIdentifier(name) else { throw TypedDataText.badType(text) }
            type = .structure(TypedDataName(lookingUp: name))
        }
        // The last suffix is the outermost array: `T[2][]` is a dynamic array of `T[2]`.
        for length in lengths.reversed() { type = .array(type, length: length) }
        self = type
    }

    /// The atomic or dynamic type `name` spells; nil for other names; a malformed width is an error.
    static func atomic(_ name: String) throws(ChainError) -> TypedDataType? {
        switch name {
        case "address": return .address
        case "bool": return .bool
        case "string": return .string
        case "bytes": return .bytes
        default: break
        }
        for (prefix, make) in [("uint", { TypedDataType.uint(bits: $0) }), ("int", { .int(bits: $0) }),
                               ("bytes", { .fixedBytes($0) })] as [(String, (Int) -> TypedDataType)] {
            guard name.hasPrefix(prefix) else { continue }
            let digits = Array(name.utf8.dropFirst(prefix.utf8.count))
            guard digits.allSatisfy({ (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }) else { return nil }
            let width = digits.count <= 3 && digits.first != UInt8(ascii: "0")
                ? digits.reduce(0) { $0 * 10 + Int($1 - UInt8(ascii: "0")) } : 0
            if prefix == "bytes" {
                guard (1...32).contains(width) else { throw .invalidEncoding(reason: "unsupported type \(TypedDataText.quoted(name))") }
                return make(width)
            }
            guard (8...256).contains(width), width % 8 == 0 else {
                throw .invalidEncoding(reason: "unsupported type \(TypedDataText.quoted(name))")
            }
            return make(width)
        }
        return nil
    }

    /// Whether `name` spells an atomic type, valid or not (`uint256`, `uint7`, `bytes`, `bytes33`): no struct
    /// may take such a name.
    static func isReserved(_ name: String) -> Bool {
        do { return try atomic(name) != nil } catch { return true }
    }

    /// The struct type at the core of this type (`Person` for `Person[2][]`), if any.
    var structName: TypedDataName? {
        switch self {
        case .structure(let name): name
        case .array(let element, _): element.structName
        default: nil
        }
    }
}

/// The `types` of a typed-data document, checked: names are ASCII identifiers (`[A-Za-z_$][A-Za-z0-9_$]*`,
/// `invalidTypedDataName` otherwise, checked before anything is stored), struct names are not atomic type names, member names are unique within their struct, every struct a
/// member refers to is defined, and no struct refers to itself (directly, through other structs or
/// through arrays). Limits: `maximumTypes` struct types, `maximumFields` members each.
struct TypedDataSchema: Sendable, Equatable {
    struct Member: Sendable, Equatable {
        let name: TypedDataName
        /// As written: it is what `encodeType` hashes.
        let typeText: String
        let type: TypedDataType
    }

    static let maximumTypes = 256
    static let maximumFields = 256

    let structs: [TypedDataName: [Member]]
    /// Each struct's member types by member name.
    let memberTypes: [TypedDataName: [TypedDataName: TypedDataType]]

    init(_ types: [String: [EthereumTypedData.Field]]) throws(ChainError) {
        guard types.count <= Self.maximumTypes else { throw .invalidEncoding(reason: "more than \(Self.maximumTypes) types") }
        try Self.checkNames(types)
        var structs: [TypedDataName: [Member]] = [:]
        for (text, fields) in types {
            let name = try TypedDataName(validating: text, at: "types")
            guard !TypedDataType.isReserved(text) else {
                throw .invalidEncoding(reason: "type name \(TypedDataText.quoted(text)) is an atomic type")
            }
            guard fields.count <= Self.maximumFields else {
                throw .invalidEncoding(reason: "type \(name): more than \(Self.maximumFields) members")
            }
            var members: [Member] = []
            var seen = Set<TypedDataName>()
            for field in fields {
                let member = try TypedDataName(validating: field.name, at: "types.\(text)")
                guard seen.insert(member).inserted else { throw .invalidEncoding(reason: "type \(name): duplicate member \(member)") }
                members.append(Member(name: member, typeText: field.type, type: try TypedDataType(parsing: field.type)))
            }
            structs[name] = members
        }
        for (name, members) in structs {
            for member in members {
                if let referenced = member.type.structName, structs[referenced] == nil {
                    throw .invalidEncoding(reason: "type \(name): unknown type \(referenced)")
                }
            }
        }
        self.structs = structs
        memberTypes = structs.mapValues { members in
            Dictionary(members.map { ($0.name, $0.type) }, uniquingKeysWith: { first, _ in first })
        }
        try checkAcyclic()
    }

    /// Refuses the first name (type names in byte order, then their member names in order) that is not an
    /// ASCII identifier, before any of them is used as a key: `invalidTypedDataName`.
    static func checkNames(_ types: [String: [EthereumTypedData.Field]]) throws(ChainError) {
        for name in types.keys.sorted(by: TypedDataText.precedes) {
            _ = try TypedDataName(validating: name, at: "types")
            for field in types[name] ?? [] { _ = try TypedDataName(validating: field.name, at: "types.\(name)") }
        }
    }

    /// The struct types `name` refers to (directly or not), without `name` unless it is part of a cycle.
    private func references(of name: TypedDataName) -> Set<TypedDataName> {
        var found = Set<TypedDataName>()
        var pending = [name]
        while let next = pending.popLast() {
            for member in structs[next] ?? [] {
                if let referenced = member.type.structName, found.insert(referenced).inserted { pending.append(referenced) }
            }
        }
        return found
    }

    /// Refuses cycles: repeatedly removes the structs that refer to no remaining struct (Kahn's algorithm);
    /// whatever is left lies on or behind a cycle.
    private func checkAcyclic() throws(ChainError) {
        var remaining: [TypedDataName: Set<TypedDataName>] = [:]
        for (name, members) in structs { remaining[name] = Set(members.compactMap { $0.type.structName }) }
        var progress = true
        while progress && !remaining.isEmpty {
            progress = false
            for (name, dependencies) in remaining where dependencies.allSatisfy({ remaining[$0] == nil }) {
                remaining[name] = nil
                progress = true
            }
        }
        if let first = remaining.keys.min() {
            throw .invalidEncoding(reason: "type \(first) is recursive")
        }
    }

    /// `encodeType`: the type's definition `Name(type1 name1,…)` followed by the definitions of every
    /// struct type it refers to, sorted by name.
    func encodeType(_ name: TypedDataName) throws(ChainError) -> String {
        guard structs[name] != nil else { throw .invalidEncoding(reason: "unknown type \(TypedDataText.quoted(name.text))") }
        let dependencies = references(of: name).subtracting([name]).sorted()
        var text = ""
        for type in [name] + dependencies {
            let members = structs[type] ?? []
            text += type.text + "(" + members.map { $0.typeText + " " + $0.name.text }.joined(separator: ",") + ")"
        }
        return text
    }
}

/// Text helpers for typed data: identifiers, and outside text quoted in error reasons (shortened).
enum TypedDataText {
    static let maximumIdentifierLength = 256

    static func isIdentifier(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard let first = bytes.first, bytes.count <= maximumIdentifierLength else { return false }
        func isLetter(_ byte: UInt8) -> Bool {
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
                || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "$")
        }
        return isLetter(first) && bytes.allSatisfy { isLetter($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) }
    }

    /// Byte-wise order of the UTF-8 (the order of the EIP's reference code for ASCII names).
    static func precedes(_ lhs: String, _ rhs: String) -> Bool { lhs.utf8.lexicographicallyPrecedes(rhs.utf8) }

    /// `text` in quotes, cut to 64 characters (reasons stay short whatever the input).
    static func quoted(_ text: String) -> String { "\"\(cut(text))\"" }

    /// `text` cut to 64 Unicode scalars ("…" marks a cut), every scalar outside printable ASCII written as `\u{…}`, so an
    /// error never carries control, bidi or look-alike characters from the document into a log or a wallet's UI.
    static func cut(_ text: String) -> String {
        let kept = text.unicodeScalars.prefix(64).map { scalar -> String in
            (0x20...0x7E).contains(scalar.value) && scalar != "\\"
                ? String(scalar) : "\\u{" + String(scalar.value, radix: 16, uppercase: true) + "}"
        }.joined()
        return text.unicodeScalars.count > 64 ? kept + "…" : kept
    }

    /// The error for a name that is not an ASCII identifier, at `path`.
    static func badName(_ text: String, at path: String) -> ChainError { .invalidTypedDataName(path: path, name: cut(text)) }

    static func badType(_ text: String) -> ChainError { .invalidEncoding(reason: "malformed type \(quoted(text))") }
}
