import Foundation

/// The scripts P2WPKH signing needs (BIP-141, <https://github.com/bitcoin/bips/blob/master/bip-0141.mediawiki>).
public enum BitcoinScript {
    /// `OP_0 <20-byte key hash>`: the P2WPKH scriptPubKey.
    public static func p2wpkh(keyHash: Data) throws(ChainError) -> Data {
        guard keyHash.count == 20 else { throw .invalidEncoding(reason: "key hash is not 20 bytes") }
        return Data([0x00, 0x14]) + keyHash
    }

    /// `OP_DUP OP_HASH160 <20-byte key hash> OP_EQUALVERIFY OP_CHECKSIG`: the P2PKH script, which is also
    /// BIP-143's scriptCode for a P2WPKH input.
    public static func p2pkh(keyHash: Data) throws(ChainError) -> Data {
        guard keyHash.count == 20 else { throw .invalidEncoding(reason: "key hash is not 20 bytes") }
        return Data([0x76, 0xA9, 0x14]) + keyHash + Data([0x88, 0xAC])
    }

    /// The key hash of a P2WPKH scriptPubKey, or nil for any other script.
    public static func p2wpkhKeyHash(_ scriptPubKey: Data) -> Data? {
        let bytes = [UInt8](scriptPubKey)
        guard bytes.count == 22, bytes[0] == 0x00, bytes[1] == 0x14 else { return nil }
        return Data(bytes[2...])
    }
}

extension BitcoinTransaction {
    /// SIGHASH_ALL, the only signature hash type this module signs with.
    public static let sighashAll: UInt32 = 1

    /// The BIP-143 signature hash (<https://github.com/bitcoin/bips/blob/master/bip-0143.mediawiki>) of
    /// input `index` for a version-0 witness program: `scriptCode` (for P2WPKH, `BitcoinScript.p2pkh` of the
    /// key hash) and the `amount` (satoshis) of the output it spends. Only SIGHASH_ALL (1):
    /// `ChainError.unsupported` for any other type, `invalidEncoding` for an index out of range.
    public func segwitSignatureHash(input index: Int, scriptCode: Data, amount: UInt64,
                                    sighashType: UInt32 = sighashAll) throws(ChainError) -> Data {
        guard sighashType == Self.sighashAll else { throw .unsupported(reason: "sighash type \(sighashType) (only SIGHASH_ALL)") }
        guard inputs.indices.contains(index) else { throw .invalidEncoding(reason: "input \(index) does not exist") }
        guard amount <= Self.maximumAmount else { throw .invalidEncoding(reason: "amount above 21 million BTC") }
        let le = BitcoinEncoding.littleEndian
        let prevouts = inputs.reduce(into: [UInt8]()) { $0 += [UInt8]($1.outpoint.txid) + le(UInt64($1.outpoint.index), 4) }
        let sequences = inputs.reduce(into: [UInt8]()) { $0 += le(UInt64($1.sequence), 4) }
        let outputBytes = outputs.reduce(into: [UInt8]()) { $0 += Self.outputBytes($1) }
        let input = inputs[index]
        var preimage = le(UInt64(UInt32(bitPattern: version)), 4)
        preimage += BitcoinEncoding.hash256(prevouts)
        preimage += BitcoinEncoding.hash256(sequences)
        preimage += [UInt8](input.outpoint.txid) + le(UInt64(input.outpoint.index), 4)
        preimage += BitcoinEncoding.lengthPrefixed([UInt8](scriptCode))
        preimage += le(amount, 8)
        preimage += le(UInt64(input.sequence), 4)
        preimage += BitcoinEncoding.hash256(outputBytes)
        preimage += le(UInt64(lockTime), 4)
        preimage += le(UInt64(sighashType), 4)
        return Data(BitcoinEncoding.hash256(preimage))
    }
}
