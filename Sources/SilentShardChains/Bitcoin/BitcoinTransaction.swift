import Foundation
import MPCCrypto

/// A Bitcoin transaction in consensus serialization: legacy, and with witnesses as BIP-144 defines
/// (<https://github.com/bitcoin/bips/blob/master/bip-0144.mediawiki>: `version ‖ 0x00 ‖ 0x01 ‖ inputs ‖
/// outputs ‖ witnesses ‖ lockTime`). Parsing is strict: shortest CompactSizes, no trailing bytes, amounts at
/// most 21 million BTC, at most `maximumSize` bytes, and a witness marker only when some witness is not
/// empty (as Bitcoin Core); anything else is `ChainError.invalidEncoding`.
public struct BitcoinTransaction: Sendable, Equatable {
    /// The output an input spends: the funding transaction's txid (32 bytes, in serialization order, i.e.
    /// the reverse of the hex that explorers show) and the output's index.
    public struct OutPoint: Sendable, Equatable, Hashable {
        public let txid: Data
        public let index: UInt32

        /// `txid` must be 32 bytes in serialization order (`invalidEncoding` otherwise).
        public init(txid: Data, index: UInt32) throws(ChainError) {
            guard txid.count == 32 else { throw .invalidEncoding(reason: "outpoint: txid is not 32 bytes") }
            self.txid = txid
            self.index = index
        }
    }

    /// An input: the outpoint it spends, its scriptSig, sequence and witness stack.
    public struct Input: Sendable, Equatable {
        public var outpoint: OutPoint
        public var scriptSig: Data
        public var sequence: UInt32
        public var witness: [Data]

        /// An input; unsigned by default (empty scriptSig and witness), final sequence.
        public init(outpoint: OutPoint, scriptSig: Data = Data(), sequence: UInt32 = 0xFFFF_FFFF, witness: [Data] = []) {
            self.outpoint = outpoint
            self.scriptSig = scriptSig
            self.sequence = sequence
            self.witness = witness
        }
    }

    /// An output: an amount in satoshis and its scriptPubKey.
    public struct Output: Sendable, Equatable {
        public var amount: UInt64
        public var scriptPubKey: Data

        /// An output of `amount` satoshis to `scriptPubKey`.
        public init(amount: UInt64, scriptPubKey: Data) {
            self.amount = amount
            self.scriptPubKey = scriptPubKey
        }
    }

    /// The largest serialized transaction accepted (bytes; a block's maximum serialized size).
    public static let maximumSize = 4_000_000
    /// 21 million BTC in satoshis (Bitcoin Core's `MAX_MONEY`).
    public static let maximumAmount: UInt64 = 2_100_000_000_000_000

    /// Signed 32-bit version (1 or 2 in practice).
    public var version: Int32
    public var inputs: [Input]
    public var outputs: [Output]
    public var lockTime: UInt32

    /// A transaction from its parts (version 2 and lock time 0 by default).
    public init(version: Int32 = 2, inputs: [Input], outputs: [Output], lockTime: UInt32 = 0) {
        self.version = version
        self.inputs = inputs
        self.outputs = outputs
        self.lockTime = lockTime
    }

    /// Parses a transaction, with witnesses (BIP-144) or without (strict, see above).
    public init(serialized: Data) throws(ChainError) {
        try self.init(bytes: [UInt8](serialized), allowWitness: true)
    }

    /// Parses a transaction in the legacy serialization only (no witness marker), as BIP-174 requires for
    /// a PSBT's unsigned transaction.
    public init(legacySerialized: Data) throws(ChainError) {
        try self.init(bytes: [UInt8](legacySerialized), allowWitness: false)
    }

    init(bytes: [UInt8], allowWitness: Bool) throws(ChainError) {
        guard bytes.count <= Self.maximumSize else { throw .invalidEncoding(reason: "transaction: larger than \(Self.maximumSize) bytes") }
        var reader = BitcoinReader(bytes)
        try self.init(reader: &reader, allowWitness: allowWitness)
        guard reader.isAtEnd else { throw .invalidEncoding(reason: "transaction: trailing bytes") }
    }

    init(reader: inout BitcoinReader, allowWitness: Bool) throws(ChainError) {
        version = Int32(bitPattern: try reader.uint32("transaction version"))
        var hasWitness = false
        if allowWitness, reader.peek() == 0 {
            // BIP-144: a zero input count is the marker; the flag must be 1. (A legacy transaction with no
            // inputs and no outputs reads the same up to its flag 0, as in Bitcoin Core.)
            _ = try reader.byte("witness marker")
            switch try reader.byte("witness flag") {
            case 1: hasWitness = true
            case 0:
                inputs = []
                outputs = []
                lockTime = try reader.uint32("lockTime")
                return
            default: throw .invalidEncoding(reason: "transaction: unknown witness flag")
            }
        }
        // An input takes at least 41 bytes, an output at least 9.
        inputs = []
        for _ in 0..<(try reader.count("input count", itemSize: 41)) {
            let txid = Data(try reader.take(32, "outpoint txid"))
            let index = try reader.uint32("outpoint index")
            let scriptSig = Data(try reader.lengthPrefixed("scriptSig"))
            inputs.append(Input(outpoint: try OutPoint(txid: txid, index: index), scriptSig: scriptSig,
                                sequence: try reader.uint32("sequence")))
        }
        outputs = []
        for _ in 0..<(try reader.count("output count", itemSize: 9)) {
            let amount = try reader.uint64("output amount")
            guard amount <= Self.maximumAmount else { throw .invalidEncoding(reason: "output amount above 21 million BTC") }
            outputs.append(Output(amount: amount, scriptPubKey: Data(try reader.lengthPrefixed("scriptPubKey"))))
        }
        if hasWitness {
            for index in inputs.indices {
                inputs[index].witness = try Self.readWitness(&reader)
            }
            guard inputs.contains(where: { !$0.witness.isEmpty }) else {
                throw .invalidEncoding(reason: "transaction: witness marker without any witness")
            }
        }
        lockTime = try reader.uint32("lockTime")
    }

    /// A witness stack: a count, then each item length-prefixed.
    static func readWitness(_ reader: inout BitcoinReader) throws(ChainError) -> [Data] {
        var stack: [Data] = []
        for _ in 0..<(try reader.count("witness item count", itemSize: 1)) {
            stack.append(Data(try reader.lengthPrefixed("witness item")))
        }
        return stack
    }

    static func witnessBytes(_ stack: [Data]) -> [UInt8] {
        stack.reduce(into: BitcoinEncoding.compactSize(stack.count)) { $0 += BitcoinEncoding.lengthPrefixed([UInt8]($1)) }
    }

    /// Whether any input carries a witness.
    public var hasWitness: Bool { inputs.contains { !$0.witness.isEmpty } }

    /// The consensus serialization: BIP-144's witness form when some input has a witness, else legacy.
    public var serialized: Data { Data(bytes(withWitness: hasWitness)) }

    /// The legacy serialization (no witnesses), which the txid hashes.
    public var legacySerialized: Data { Data(bytes(withWitness: false)) }

    func bytes(withWitness: Bool) -> [UInt8] {
        var out = BitcoinEncoding.littleEndian(UInt64(UInt32(bitPattern: version)), count: 4)
        if withWitness { out += [0, 1] }
        out += BitcoinEncoding.compactSize(inputs.count)
        for input in inputs {
            out += [UInt8](input.outpoint.txid) + BitcoinEncoding.littleEndian(UInt64(input.outpoint.index), count: 4)
            out += BitcoinEncoding.lengthPrefixed([UInt8](input.scriptSig))
            out += BitcoinEncoding.littleEndian(UInt64(input.sequence), count: 4)
        }
        out += BitcoinEncoding.compactSize(outputs.count)
        for output in outputs { out += Self.outputBytes(output) }
        if withWitness {
            for input in inputs { out += Self.witnessBytes(input.witness) }
        }
        return out + BitcoinEncoding.littleEndian(UInt64(lockTime), count: 4)
    }

    static func outputBytes(_ output: Output) -> [UInt8] {
        BitcoinEncoding.littleEndian(output.amount, count: 8) + BitcoinEncoding.lengthPrefixed([UInt8](output.scriptPubKey))
    }

    /// The txid: HASH256 of the legacy serialization, in serialization order (`txidHex` is the usual
    /// display form, reversed).
    public var txid: Data { Data(BitcoinEncoding.hash256(bytes(withWitness: false))) }
    /// The wtxid (BIP-141): HASH256 of the full serialization (equals the txid without witnesses).
    public var wtxid: Data { Data(BitcoinEncoding.hash256(bytes(withWitness: hasWitness))) }
    /// The txid as explorers and RPCs show it (byte-reversed hex).
    public var txidHex: String { Hex.encode(txid.reversed()) }
}
