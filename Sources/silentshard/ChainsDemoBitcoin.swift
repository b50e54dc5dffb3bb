import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardChains
import SilentShardCore

/// The Bitcoin entry of `silentshard demo --chains`: a regtest P2WPKH address and a PSBT spending made-up
/// UTXOs of it (in made-up previous transactions, which the PSBT carries) to a random regtest P2WPKH address
/// with change, signed through `BitcoinPSBT.sign`, finalized and extracted, every input signature checked
/// again before it is written.
enum ChainsDemoBitcoin {
    /// BIP-174 `PSBT_IN_NON_WITNESS_UTXO`, `PSBT_IN_WITNESS_UTXO` and `PSBT_IN_PARTIAL_SIG`.
    static let nonWitnessUTXOType: UInt64 = 0x00, witnessUTXOType: UInt64 = 0x01, partialSignatureType: UInt64 = 0x02

    /// The entry for `keyshare` (an ECDSA key of `party`) under `path`.
    static func entry(party: ChainsDemo.Party, keyshare: Keyshare, path: String) async throws -> JSONValue {
        let publicKey = try SilentShard.ECDSA.deriveChildPublicKey(keyshare: keyshare, path: path)
        let address = try BitcoinAddress.p2wpkh(publicKey: publicKey, network: .regtest)
        let ownScript = try BitcoinScript.p2wpkh(keyHash: BitcoinAddress.keyHash(publicKey: publicKey))
        let what = "bitcoin \(party.mode) \(path)"

        // Made-up UTXOs of our address (random amounts, each at a random index of a made-up previous transaction),
        // spent to a random address with change. The PSBT carries each previous transaction
        // (`PSBT_IN_NON_WITNESS_UTXO`): the signer refuses a segwit input without it (BIP-143's fee attack).
        let utxos = try (0..<Int(ChainsDemo.random(in: 1...3))).map { _ in
            let output = BitcoinTransaction.Output(amount: ChainsDemo.random(in: 100_000...50_000_000), scriptPubKey: ownScript)
            let index = Int(ChainsDemo.random(in: 0...7))
            let others = (0..<8).map { _ in
                BitcoinTransaction.Output(amount: ChainsDemo.random(in: 1_000...1_000_000), scriptPubKey: Data([0x00, 0x14]) + ChainsDemo.random(20))
            }
            let previous = BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: ChainsDemo.random(32), index: 0))],
                                              outputs: Array(others[..<index]) + [output] + Array(others[index...].prefix(1)))
            return (outpoint: try BitcoinTransaction.OutPoint(txid: previous.txid, index: UInt32(index)), output: output, previous: previous)
        }
        let total = utxos.reduce(0) { $0 + $1.output.amount }
        let fee = 500 + 100 * UInt64(utxos.count)
        let amount = ChainsDemo.random(in: 10_000...(total / 2))
        let recipientKey = Data(try Secp256k1.Point(base: Secp256k1.Scalar.random()).compressed())
        let recipient = try BitcoinAddress.p2wpkh(publicKey: recipientKey, network: .regtest)
        let recipientScript = try BitcoinScript.p2wpkh(keyHash: BitcoinAddress.keyHash(publicKey: recipientKey))
        let unsigned = BitcoinTransaction(
            inputs: utxos.map { BitcoinTransaction.Input(outpoint: $0.outpoint, sequence: 0xFFFF_FFFD) },
            outputs: [BitcoinTransaction.Output(amount: amount, scriptPubKey: recipientScript),
                      BitcoinTransaction.Output(amount: total - amount - fee, scriptPubKey: ownScript)])
        var psbt = try BitcoinPSBT(unsignedTransaction: unsigned)
        // Each input names our key's origin as a watch-only wallet would (the root key's fingerprint, the soft path).
        let fingerprint = try BitcoinPSBT.fingerprint(of: keyshare.publicKey)
        let origin = BitcoinPSBT.KeyOrigin(publicKey: publicKey, fingerprint: fingerprint, path: try DerivationPath(path).indices)
        for (index, utxo) in utxos.enumerated() {
            try psbt.add(BitcoinPSBT.Record(type: nonWitnessUTXOType, value: utxo.previous.serialized), toInput: index)
            try psbt.add(BitcoinPSBT.Record(type: witnessUTXOType, value: BitcoinPSBT.witnessUTXOValue(utxo.output)), toInput: index)
            try psbt.add(origin.record, toInput: index)
        }
        let unsignedBase64 = psbt.base64

        // Inputs found by their BIP-32 derivation records: the path each names is derived and must be the key paid to.
        let signedInputs = try await psbt.sign(masterFingerprint: fingerprint,
                                               childPublicKey: { try SilentShard.ECDSA.deriveChildPublicKey(keyshare: keyshare, path: $0) },
                                               with: { hash, childPath in try await party.sign(keyshare, hash, childPath) })
        try ChainsDemo.check(signedInputs == Array(utxos.indices), "\(what): every input signed")
        let signedBase64 = psbt.base64
        try verifyInputSignatures(BitcoinPSBT(base64: signedBase64), publicKey: publicKey, what: what)

        try psbt.finalize()
        let transaction = try psbt.extractTransaction()
        let parsed = try BitcoinTransaction(serialized: transaction.serialized)
        try ChainsDemo.check(parsed == transaction && parsed.txid == unsigned.txid && parsed.outputs == unsigned.outputs
                             && parsed.inputs.allSatisfy { $0.witness.count == 2 && $0.witness[1] == publicKey },
                             "\(what): extracted transaction")

        return .object([
            "chain": .string("bitcoin"), "mode": .string(party.mode), "network": .string("regtest"), "path": .string(path),
            "publicKey": .string(Hex.encode([UInt8](publicKey))), "address": .string(address),
            "recipient": .string(recipient), "amount": .integer(String(amount)), "fee": .integer(String(fee)),
            "psbt": .string(unsignedBase64), "signedPsbt": .string(signedBase64),
            "tx": .string(Hex.encode([UInt8](transaction.serialized))), "txid": .string(transaction.txidHex),
        ])
    }

    /// Every input of `psbt` holds a partial signature of `publicKey` that verifies over its BIP-143 hash.
    static func verifyInputSignatures(_ psbt: BitcoinPSBT, publicKey: Data, what: String) throws {
        for index in psbt.inputs.indices {
            guard let value = psbt.inputs[index].value(type: partialSignatureType, keyData: publicKey) else {
                throw ChainsDemo.Failure("chains demo: \(what): input \(index) has no signature of the key")
            }
            let signature = try BitcoinSignature(scriptEncoding: value)
            try ChainsDemo.check(signature.verifies(hash: try psbt.signatureHash(input: index), publicKey: publicKey),
                                 "\(what): input \(index) signature")
        }
    }
}
