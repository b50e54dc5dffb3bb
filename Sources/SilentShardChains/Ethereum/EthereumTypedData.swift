import Foundation
import SilentShardCore

/// EIP-712 typed structured data (<https://eips.ethereum.org/EIPS/eip-712>), as `eth_signTypedData_v4`
/// carries it: `types`, `primaryType`, `domain` and `message`. The signer signs
/// `keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message))`, where `domainSeparator =
/// hashStruct("EIP712Domain", domain)`.
///
/// Supported: atomic `address`, `bool`, `uint8`…`uint256` and `int8`…`int256` (step 8), `bytes1`…`bytes32`;
/// dynamic `bytes` and `string`; struct types; arrays `T[]` and `T[k]` of any of these, nested. Checked
/// when built (a document that does not encode is never made): types (identifiers, no unknown or
/// recursive types), every member present and no others, integers in range, `bytesN` of exactly N bytes,
/// fixed arrays of exactly k items, the `EIP712Domain` members the EIP names with their types.
/// `primaryType` `EIP712Domain` (a domain-only signature) is not supported.
public struct EthereumTypedData: Sendable, Equatable {
    /// A struct member as `types` lists it: `{"name": …, "type": …}`.
    public struct Field: Sendable, Hashable {
        public let name: String
        /// The member's type as written: `uint256`, `Person`, `bytes32[2][]`.
        public let type: String

        /// A member `name` of type `type` (checked when the typed data is built).
        public init(name: String, type: String) {
            self.name = name
            self.type = type
        }
    }

    /// A value of a member, as its type reads it (see `init(types:primaryType:domain:message:)`).
    public indirect enum Value: Sendable, Equatable {
        case address(EthereumAddress)
        case bool(Bool)
        /// An integer (`uintN`, `intN`): sign and magnitude; a negative zero is zero.
        case integer(negative: Bool, magnitude: EthereumQuantity)
        /// The bytes of a `bytes` or `bytesN` member.
        case bytes(Data)
        case string(String)
        /// The items of an array member.
        case array([Value])
        /// The members of a struct by name.
        case structure([String: Value])

        /// Strings compare by their UTF-8 (what is hashed), not by Unicode canonical equivalence.
        public static func == (lhs: Value, rhs: Value) -> Bool {
            switch (lhs, rhs) {
            case let (.address(left), .address(right)): left == right
            case let (.bool(left), .bool(right)): left == right
            case let (.integer(leftSign, left), .integer(rightSign, right)): leftSign == rightSign && left == right
            case let (.bytes(left), .bytes(right)): left == right
            case let (.string(left), .string(right)): left.utf8.elementsEqual(right.utf8)
            case let (.array(left), .array(right)): left == right
            case let (.structure(left), .structure(right)):
                // By the keys' bytes too: a Swift dictionary's `==` would match `K` with U+212A.
                left.count == right.count && {
                    let keyed = Dictionary(right.map { (Array($0.key.utf8), $0.value) }, uniquingKeysWith: { first, _ in first })
                    return left.allSatisfy { key, value in keyed[Array(key.utf8)] == value }
                }()
            default: false
            }
        }
    }

    /// The domain's struct type name.
    public static let domainTypeName = "EIP712Domain"
    static let domainName = TypedDataName(lookingUp: domainTypeName)

    /// The EIP's domain members with their types (any subset, in any order; other members are allowed).
    static let domainMemberTypes = ["name": "string", "version": "string", "chainId": "uint256",
                                    "verifyingContract": "address", "salt": "bytes32"]

    /// The struct types by name, `EIP712Domain` included (an empty one when the document has none).
    public let types: [String: [Field]]
    /// The struct type of `message`.
    public let primaryType: String
    /// The `EIP712Domain` value.
    public let domain: [String: Value]
    /// The `primaryType` value.
    public let message: [String: Value]
    /// `hashStruct("EIP712Domain", domain)`.
    public let domainSeparator: Data
    /// `hashStruct(primaryType, message)`.
    public let messageHash: Data
    let schema: TypedDataSchema

    /// Typed data from its parts, checked as described above (`invalidEncoding`, `invalidTypedDataName` for a
    /// type name, `primaryType`, member name or struct-value key that is not an ASCII identifier, or an
    /// address's own error, otherwise). Values by member type: `address` an `.address`; `bool` a `.bool`; `uintN`/`intN`
    /// an `.integer` in range; `bytes` and `bytesN` `.bytes` (exactly N bytes); `string` a `.string`;
    /// arrays an `.array`; structs a `.structure` with exactly the type's members. Without an
    /// `EIP712Domain` type the domain must be empty (its separator is then that of `EIP712Domain()`).
    public init(types: [String: [Field]], primaryType: String, domain: [String: Value], message: [String: Value]) throws(ChainError) {
        let (types, schema) = try Self.schema(types, domainIsEmpty: domain.isEmpty)
        try Self.checkPrimaryType(primaryType, schema)
        try self.init(types: types, schema: schema, primaryType: primaryType, domain: domain, message: message)
    }

    init(types: [String: [Field]], schema: TypedDataSchema, primaryType: String, domain: [String: Value],
         message: [String: Value]) throws(ChainError) {
        var encoder = TypedDataEncoder(schema: schema)
        domainSeparator = try encoder.hashStruct(Self.domainName, domain, path: "domain")
        messageHash = try encoder.hashStruct(TypedDataName(lookingUp: primaryType), message, path: "message")
        self.types = types
        self.schema = schema
        self.primaryType = primaryType
        self.domain = domain
        self.message = message
    }

    /// The types with `EIP712Domain` added when absent (only for an empty domain), checked (names first).
    static func schema(_ types: [String: [Field]], domainIsEmpty: Bool) throws(ChainError) -> ([String: [Field]], TypedDataSchema) {
        try TypedDataSchema.checkNames(types)
        var types = types
        if types[domainTypeName] == nil {
            guard domainIsEmpty else { throw .invalidEncoding(reason: "the domain has members but types has no EIP712Domain") }
            types[domainTypeName] = []
        }
        for field in types[domainTypeName] ?? [] {
            if let expected = domainMemberTypes[field.name], field.type != expected {
                throw .invalidEncoding(reason: "EIP712Domain.\(field.name) must be of type \(expected)")
            }
        }
        return (types, try TypedDataSchema(types))
    }

    static func checkPrimaryType(_ primaryType: String, _ schema: TypedDataSchema) throws(ChainError) {
        let name = try TypedDataName(validating: primaryType, at: "primaryType")
        guard name != domainName else {
            throw .invalidEncoding(reason: "primaryType EIP712Domain (a domain-only signature) is not supported")
        }
        guard schema.structs[name] != nil else {
            throw .invalidEncoding(reason: "unknown primaryType \(TypedDataText.quoted(primaryType))")
        }
    }

    /// The 32-byte hash the signer signs: `keccak256(0x19 0x01 ‖ domainSeparator ‖ hashStruct(message))`.
    public var signingHash: Data { Keccak256.hash(Data([0x19, 0x01]) + domainSeparator + messageHash) }

    /// `encodeType` of a struct type: `Name(type1 name1,…)` followed by the struct types it refers to,
    /// sorted by name (`Mail(Person from,Person to,string contents)Person(string name,address wallet)`).
    public func encodeType(_ typeName: String) throws(ChainError) -> String { try schema.encodeType(TypedDataName(lookingUp: typeName)) }

    /// `typeHash = keccak256(encodeType(typeName))`.
    public func typeHash(_ typeName: String) throws(ChainError) -> Data {
        Keccak256.hash(Data(try schema.encodeType(TypedDataName(lookingUp: typeName)).utf8))
    }

    /// `encodeData`: `typeHash ‖ enc(member₁) ‖ … ‖ enc(memberₙ)`, 32 bytes each, for a value of a struct
    /// type of this document.
    public func encodeData(_ typeName: String, _ value: [String: Value]) throws(ChainError) -> Data {
        var encoder = TypedDataEncoder(schema: schema)
        return try encoder.encodeData(TypedDataName(lookingUp: typeName), value, path: typeName)
    }

    /// `hashStruct = keccak256(encodeData(typeName, value))`.
    public func hashStruct(_ typeName: String, _ value: [String: Value]) throws(ChainError) -> Data {
        Keccak256.hash(try encodeData(typeName, value))
    }

    /// Signs `signingHash` through `sign` (the SDK's signature over a 32-byte hash, e.g.
    /// `{ try await session.signature(keyshare: key, message: $0, chainPath: path) }`) and checks the
    /// result recovers to `publicKey`'s address (`signatureMismatch` otherwise). Returns the signature
    /// (`rsv` is what `eth_signTypedData_v4` returns).
    public func sign(publicKey: Data, with sign: (Data) async throws -> Signature) async throws -> EthereumSignature {
        let address = try EthereumAddress(publicKey: publicKey)
        let digest = signingHash
        let signature = try EthereumSignature(try await sign(digest))
        guard try signature.recoverAddress(hash: digest) == address else { throw ChainError.signatureMismatch }
        return signature
    }

    /// The address that signed this typed data with `signature`.
    public func recoverAddress(signature: EthereumSignature) throws(ChainError) -> EthereumAddress {
        try signature.recoverAddress(hash: signingHash)
    }
}
