import Foundation
import MPCCrypto

/// A Partially Signed Bitcoin Transaction, version 0 (BIP-174,
/// <https://github.com/bitcoin/bips/blob/master/bip-0174.mediawiki>): `psbt 0xFF`, a global map holding
/// the unsigned transaction, one map per input and one per output, each a list of key-value records
/// ended by 0x00.
///
/// Parsing is strict: shortest CompactSizes; no duplicate keys in a map; the unsigned transaction present,
/// legacy-serialized, with empty scriptSigs; as many input and output maps as it has inputs and outputs;
/// no trailing bytes; at most `maximumSize` bytes. Records of the types this module knows (BIP-174's
/// version-0 global, input and output types) must have their key and value forms (a non-witness UTXO
/// must be the transaction the input spends from; the unsigned transaction must not start like BIP-144's
/// witness serialization); BIP-370's version-2-only types are refused. Every
/// other record (Taproot's BIP-371 fields, proprietary 0xFC, unknown types) is kept as it is. Records
/// keep their order, so `serialized` gives back the parsed bytes exactly. Failures are
/// `ChainError.invalidEncoding` (or `unsupported` for a PSBT version other than 0).
public struct BitcoinPSBT: Sendable, Equatable {
    /// One key-value record: the key's type and key data, and the value.
    public struct Record: Sendable, Equatable {
        /// The key type (a CompactSize in the key).
        public let type: UInt64
        /// The key data after the type.
        public let keyData: Data
        public let value: Data

        /// A record of key type `type` (e.g. 0x01 `PSBT_IN_WITNESS_UTXO`) with its key data and value.
        public init(type: UInt64, keyData: Data = Data(), value: Data) {
            self.type = type
            self.keyData = keyData
            self.value = value
        }

        /// The whole key: CompactSize type ‖ key data.
        public var key: Data { Data(BitcoinEncoding.compactSize64(type)) + keyData }
    }

    /// A map's records, in order; keys are unique.
    public struct Map: Sendable, Equatable {
        public internal(set) var records: [Record]

        /// The value of the record with this type and key data, if any.
        public func value(type: UInt64, keyData: Data = Data()) -> Data? {
            records.first { $0.type == type && $0.keyData == keyData }?.value
        }

        /// The records of one type.
        public func records(type: UInt64) -> [Record] { records.filter { $0.type == type } }
    }

    /// The largest PSBT accepted (bytes).
    public static let maximumSize = 16 * 1024 * 1024
    static let magic: [UInt8] = [0x70, 0x73, 0x62, 0x74, 0xFF]

    /// The global map (the unsigned transaction is its record of type 0x00).
    public private(set) var global: Map
    /// One map per input of the unsigned transaction.
    public internal(set) var inputs: [Map]
    /// One map per output of the unsigned transaction.
    public private(set) var outputs: [Map]
    /// The unsigned transaction of the global map.
    public let unsignedTransaction: BitcoinTransaction

    /// Parses a binary PSBT (strict, see above).
    public init(serialized: Data) throws(ChainError) {
        let bytes = [UInt8](serialized)
        guard bytes.count <= Self.maximumSize else { throw .invalidEncoding(reason: "PSBT: larger than \(Self.maximumSize) bytes") }
        guard bytes.starts(with: Self.magic) else { throw .invalidEncoding(reason: "PSBT: no psbt magic") }
        var reader = BitcoinReader(bytes)
        _ = try reader.take(Self.magic.count, "magic")
        global = try Self.readMap(&reader, "global map")
        try Self.checkGlobal(global)
        guard let transactionBytes = global.value(type: 0x00) else { throw .invalidEncoding(reason: "PSBT: no unsigned transaction") }
        // A zero input count followed by 1 reads as BIP-144's marker and flag: refused, whatever follows
        // (an unsigned transaction with no inputs and one output is ambiguous, and has nothing to sign).
        guard !transactionBytes.dropFirst(4).starts(with: [0, 1]) else {
            throw .invalidEncoding(reason: "PSBT: the unsigned transaction is in witness serialization")
        }
        let transaction = try BitcoinTransaction(legacySerialized: transactionBytes)
        guard transaction.inputs.allSatisfy({ $0.scriptSig.isEmpty }) else {
            throw .invalidEncoding(reason: "PSBT: the unsigned transaction has a scriptSig")
        }
        unsignedTransaction = transaction
        inputs = []
        for index in transaction.inputs.indices {
            let map = try Self.readMap(&reader, "input \(index) map")
            try Self.checkInput(map, index: index, outpoint: transaction.inputs[index].outpoint)
            inputs.append(map)
        }
        outputs = []
        for index in transaction.outputs.indices {
            let map = try Self.readMap(&reader, "output \(index) map")
            try Self.checkOutput(map, index: index)
            outputs.append(map)
        }
        guard reader.isAtEnd else { throw .invalidEncoding(reason: "PSBT: trailing bytes") }
    }

    /// Parses a Base64 PSBT (RFC 4648 with padding, canonical, no whitespace).
    public init(base64: String) throws(ChainError) {
        guard base64.utf8.count <= (Self.maximumSize / 3 + 1) * 4, let data = Data(base64Encoded: base64),
              data.base64EncodedString() == base64
        else { throw .invalidEncoding(reason: "PSBT: not canonical Base64") }
        try self.init(serialized: data)
    }

    /// The binary PSBT.
    public var serialized: Data {
        var out = Self.magic
        for map in [global] + inputs + outputs {
            for record in map.records {
                out += BitcoinEncoding.lengthPrefixed([UInt8](record.key)) + BitcoinEncoding.lengthPrefixed([UInt8](record.value))
            }
            out.append(0)
        }
        return Data(out)
    }

    /// The Base64 PSBT.
    public var base64: String { serialized.base64EncodedString() }

    // MARK: Parsing

    private static func readMap(_ reader: inout BitcoinReader, _ what: String) throws(ChainError) -> Map {
        var records: [Record] = []
        var keys = Set<Data>()
        while true {
            let key = try reader.lengthPrefixed("\(what): key")
            if key.isEmpty { return Map(records: records) }
            var keyReader = BitcoinReader(key)
            let type = try keyReader.compactSize("\(what): key type")
            let keyData = Data(try keyReader.take(keyReader.remaining, "\(what): key data"))
            let value = Data(try reader.lengthPrefixed("\(what): value"))
            guard keys.insert(Data(key)).inserted else { throw .invalidEncoding(reason: "\(what): duplicate key") }
            records.append(Record(type: type, keyData: keyData, value: value))
        }
    }

    private static func checkGlobal(_ map: Map) throws(ChainError) {
        for record in map.records {
            switch record.type {
            case 0x00: try noKeyData(record, "global unsigned transaction")
            case 0x01:
                // An xpub (78 bytes) and fingerprint ‖ one index per level of its depth.
                guard record.keyData.count == 78 else { throw .invalidEncoding(reason: "global xpub: key is not 78 bytes") }
                let depth = Int([UInt8](record.keyData)[4])
                guard record.value.count == 4 + 4 * depth else { throw .invalidEncoding(reason: "global xpub: path length is not its depth") }
            case 0x02...0x06: throw .invalidEncoding(reason: "global type \(record.type) is for PSBT version 2 only")
            case 0xFB:
                try noKeyData(record, "global version")
                guard record.value.count == 4 else { throw .invalidEncoding(reason: "global version: not 4 bytes") }
                guard record.value.allSatisfy({ $0 == 0 }) else { throw .unsupported(reason: "PSBT version other than 0") }
            case 0xFC: try checkProprietary(record, "global proprietary")
            default: break
            }
        }
    }

    private static func checkInput(_ map: Map, index: Int, outpoint: BitcoinTransaction.OutPoint) throws(ChainError) {
        let what = "input \(index)"
        for record in map.records {
            switch record.type {
            case 0x00:
                try noKeyData(record, "\(what) non-witness UTXO")
                let previous = try BitcoinTransaction(serialized: record.value)
                guard previous.txid == outpoint.txid else { throw .invalidEncoding(reason: "\(what): non-witness UTXO is not the spent transaction") }
                guard Int(outpoint.index) < previous.outputs.count else { throw .invalidEncoding(reason: "\(what): spent output index out of range") }
            case 0x01:
                try noKeyData(record, "\(what) witness UTXO")
                _ = try witnessUTXO(record.value, what)
            case 0x02:
                try publicKey(record.keyData, "\(what) partial signature")
                guard !record.value.isEmpty else { throw .invalidEncoding(reason: "\(what) partial signature: empty") }
            case 0x03:
                try noKeyData(record, "\(what) sighash type")
                guard record.value.count == 4 else { throw .invalidEncoding(reason: "\(what) sighash type: not 4 bytes") }
            case 0x04, 0x05, 0x07, 0x09: try noKeyData(record, "\(what) type \(record.type)")
            case 0x06:
                try publicKey(record.keyData, "\(what) BIP 32 derivation")
                try derivationPath(record.value, "\(what) BIP 32 derivation")
            case 0x08:
                try noKeyData(record, "\(what) final scriptWitness")
                var reader = BitcoinReader([UInt8](record.value))
                _ = try BitcoinTransaction.readWitness(&reader)
                guard reader.isAtEnd else { throw .invalidEncoding(reason: "\(what) final scriptWitness: trailing bytes") }
            case 0x0A, 0x0C:
                guard record.keyData.count == 20 else { throw .invalidEncoding(reason: "\(what) hash preimage: key is not 20 bytes") }
                let hash = record.type == 0x0A ? RIPEMD160.hash([UInt8](record.value)) : BitcoinEncoding.hash160([UInt8](record.value))
                guard Data(hash) == record.keyData else { throw .invalidEncoding(reason: "\(what): preimage does not hash to its key") }
            case 0x0B, 0x0D:
                guard record.keyData.count == 32 else { throw .invalidEncoding(reason: "\(what) hash preimage: key is not 32 bytes") }
                let hash = record.type == 0x0B ? SHA256.hash([UInt8](record.value)) : BitcoinEncoding.hash256([UInt8](record.value))
                guard Data(hash) == record.keyData else { throw .invalidEncoding(reason: "\(what): preimage does not hash to its key") }
            case 0x0E...0x12: throw .invalidEncoding(reason: "\(what): type \(record.type) is for PSBT version 2 only")
            case 0xFC: try checkProprietary(record, "\(what) proprietary")
            default: break
            }
        }
    }

    private static func checkOutput(_ map: Map, index: Int) throws(ChainError) {
        let what = "output \(index)"
        for record in map.records {
            switch record.type {
            case 0x00, 0x01: try noKeyData(record, "\(what) type \(record.type)")
            case 0x02:
                try publicKey(record.keyData, "\(what) BIP 32 derivation")
                try derivationPath(record.value, "\(what) BIP 32 derivation")
            case 0x03, 0x04: throw .invalidEncoding(reason: "\(what): type \(record.type) is for PSBT version 2 only")
            case 0xFC: try checkProprietary(record, "\(what) proprietary")
            default: break
            }
        }
    }

    private static func noKeyData(_ record: Record, _ what: String) throws(ChainError) {
        guard record.keyData.isEmpty else { throw .invalidEncoding(reason: "\(what): unexpected key data") }
    }

    /// A compressed (33-byte) or uncompressed (65-byte) key on the curve.
    private static func publicKey(_ bytes: Data, _ what: String) throws(ChainError) {
        guard bytes.count == 33 || bytes.count == 65, (try? Secp256k1.Point(bytes: [UInt8](bytes))) != nil else {
            throw .invalidEncoding(reason: "\(what): invalid public key")
        }
    }

    /// A 4-byte fingerprint and 32-bit indices.
    private static func derivationPath(_ value: Data, _ what: String) throws(ChainError) {
        guard value.count >= 4, value.count % 4 == 0 else { throw .invalidEncoding(reason: "\(what): not a fingerprint and path") }
    }

    /// `CompactSize identifier length ‖ identifier ‖ CompactSize subtype ‖ key data`.
    private static func checkProprietary(_ record: Record, _ what: String) throws(ChainError) {
        var reader = BitcoinReader([UInt8](record.keyData))
        _ = try reader.lengthPrefixed("\(what) identifier")
        _ = try reader.compactSize("\(what) subtype")
    }

    /// An output in network serialization: amount ‖ scriptPubKey.
    static func witnessUTXO(_ value: Data, _ what: String) throws(ChainError) -> BitcoinTransaction.Output {
        var reader = BitcoinReader([UInt8](value))
        let amount = try reader.uint64("\(what) witness UTXO amount")
        guard amount <= BitcoinTransaction.maximumAmount else { throw .invalidEncoding(reason: "\(what) witness UTXO: amount above 21 million BTC") }
        let script = try reader.lengthPrefixed("\(what) witness UTXO scriptPubKey")
        guard reader.isAtEnd else { throw .invalidEncoding(reason: "\(what) witness UTXO: trailing bytes") }
        return BitcoinTransaction.Output(amount: amount, scriptPubKey: Data(script))
    }
}

extension BitcoinPSBT {
    /// BIP-174's Creator: a PSBT of `unsignedTransaction` (no scriptSigs, no witnesses:
    /// `invalidEncoding` otherwise) with empty input and output maps.
    public init(unsignedTransaction: BitcoinTransaction) throws(ChainError) {
        guard unsignedTransaction.inputs.allSatisfy({ $0.scriptSig.isEmpty && $0.witness.isEmpty }) else {
            throw .invalidEncoding(reason: "PSBT: the unsigned transaction has a scriptSig or witness")
        }
        var bytes = Self.magic + [1, 0] + BitcoinEncoding.lengthPrefixed(unsignedTransaction.bytes(withWitness: false)) + [0]
        bytes += [UInt8](repeating: 0, count: unsignedTransaction.inputs.count + unsignedTransaction.outputs.count)
        try self.init(serialized: Data(bytes))
    }

    /// BIP-174's Updater: adds `record` to input `index`'s map (e.g. `PSBT_IN_WITNESS_UTXO`, type 0x01, with
    /// `BitcoinPSBT.witnessUTXOValue(_:)`). The result is checked like a parsed PSBT (a duplicate key or a
    /// malformed record is `invalidEncoding`, and the PSBT is unchanged).
    public mutating func add(_ record: Record, toInput index: Int) throws(ChainError) {
        guard inputs.indices.contains(index) else { throw .invalidEncoding(reason: "input \(index) does not exist") }
        var updated = self
        updated.inputs[index].records.append(record)
        self = try BitcoinPSBT(serialized: updated.serialized)
    }

    /// The value of a `PSBT_IN_WITNESS_UTXO` record: the output in network serialization.
    public static func witnessUTXOValue(_ output: BitcoinTransaction.Output) -> Data {
        Data(BitcoinTransaction.outputBytes(output))
    }
}
