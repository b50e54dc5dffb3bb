import Foundation

/// A serialized Solana transaction message, legacy or version 0
/// (<https://solana.com/docs/core/transactions>; v0: <https://docs.anza.xyz/proposals/versioned-transactions>),
/// parsed strictly to find the accounts that must sign. The bytes are kept as given: they are what is signed.
public struct SolanaMessage: Sendable, Equatable {
    public enum Version: Sendable, Equatable { case legacy, v0 }

    public struct Instruction: Sendable, Equatable {
        public let programIdIndex: UInt8
        public let accounts: [UInt8]
        public let data: Data
    }

    public struct AddressTableLookup: Sendable, Equatable {
        public let accountKey: SolanaAddress
        public let writableIndexes: [UInt8]
        public let readonlyIndexes: [UInt8]
    }

    public let version: Version
    public let requiredSignatures: Int
    public let readonlySignedAccounts: Int
    public let readonlyUnsignedAccounts: Int
    public let accountKeys: [SolanaAddress]
    public let recentBlockhash: Data
    public let instructions: [Instruction]
    public let addressTableLookups: [AddressTableLookup]
    /// The message exactly as serialized (what every signer signs).
    public let serialized: Data

    /// The accounts whose signatures the transaction carries, in order.
    public var signers: [SolanaAddress] { Array(accountKeys.prefix(requiredSignatures)) }

    /// Parses a serialized message; anything malformed, inconsistent or with trailing bytes is
    /// `invalidEncoding`.
    public init(serialized data: Data) throws(ChainError) {
        var reader = SolanaReader([UInt8](data))
        let first = try reader.byte()
        if first & 0x80 != 0 {
            guard first & 0x7F == 0 else { throw .invalidEncoding(reason: "message version \(first & 0x7F) not supported") }
            version = .v0
            requiredSignatures = Int(try reader.byte())
        } else {
            version = .legacy
            requiredSignatures = Int(first)
        }
        readonlySignedAccounts = Int(try reader.byte())
        readonlyUnsignedAccounts = Int(try reader.byte())
        let keyCount = try reader.shortVector()
        var keys: [SolanaAddress] = []
        for _ in 0..<keyCount { keys.append(SolanaAddress(uncheckedBytes: Data(try reader.take(32)))) }
        accountKeys = keys
        guard requiredSignatures >= 1, requiredSignatures <= keys.count, readonlySignedAccounts < requiredSignatures,
              readonlyUnsignedAccounts <= keys.count - requiredSignatures
        else { throw .invalidEncoding(reason: "message header inconsistent with its accounts") }
        recentBlockhash = Data(try reader.take(32))
        var parsed: [Instruction] = []
        for _ in 0..<(try reader.shortVector()) {
            let program = try reader.byte()
            let accounts = try reader.take(try reader.shortVector())
            let payload = try reader.take(try reader.shortVector())
            parsed.append(Instruction(programIdIndex: program, accounts: accounts, data: Data(payload)))
        }
        instructions = parsed
        var lookups: [AddressTableLookup] = []
        if version == .v0 {
            for _ in 0..<(try reader.shortVector()) {
                let key = SolanaAddress(uncheckedBytes: Data(try reader.take(32)))
                let writable = try reader.take(try reader.shortVector())
                let readonly = try reader.take(try reader.shortVector())
                lookups.append(AddressTableLookup(accountKey: key, writableIndexes: writable, readonlyIndexes: readonly))
            }
        }
        addressTableLookups = lookups
        guard reader.isAtEnd else { throw .invalidEncoding(reason: "message: trailing bytes") }
        let accountCount = keys.count + lookups.reduce(0) { $0 + $1.writableIndexes.count + $1.readonlyIndexes.count }
        for instruction in parsed {
            guard Int(instruction.programIdIndex) < keys.count, instruction.accounts.allSatisfy({ Int($0) < accountCount }) else {
                throw .invalidEncoding(reason: "instruction account index out of range")
            }
        }
        serialized = data
    }
}

/// Bounds-checked reads of Solana's wire format, with its compact-u16 ("shortvec") lengths.
struct SolanaReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func byte() throws(ChainError) -> UInt8 { try take(1)[0] }

    /// Everything not read yet.
    mutating func rest() -> [UInt8] {
        defer { offset = bytes.count }
        return Array(bytes[offset...])
    }

    mutating func take(_ count: Int) throws(ChainError) -> [UInt8] {
        guard count >= 0, bytes.count - offset >= count else { throw .invalidEncoding(reason: "truncated") }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    /// A compact-u16: 7 bits per byte, least significant first, at most 3 bytes, canonical.
    mutating func shortVector() throws(ChainError) -> Int {
        var value = 0
        for index in 0..<3 {
            let byte = try self.byte()
            value |= Int(byte & 0x7F) << (7 * index)
            if byte & 0x80 == 0 {
                guard index == 0 || byte != 0 else { throw .invalidEncoding(reason: "compact-u16 not canonical") }
                guard value <= 0xFFFF else { throw .invalidEncoding(reason: "compact-u16 too large") }
                return value
            }
        }
        throw .invalidEncoding(reason: "compact-u16 too long")
    }
}

/// Encodes a compact-u16.
func solanaShortVector(_ value: Int) -> [UInt8] {
    var out: [UInt8] = []
    var rest = value
    repeat {
        var byte = UInt8(rest & 0x7F)
        rest >>= 7
        if rest > 0 { byte |= 0x80 }
        out.append(byte)
    } while rest > 0
    return out
}
