import Foundation
import MPCCrypto
import SilentShardCore

/// BIP-174's Signer, Input Finalizer and Transaction Extractor roles
/// (<https://github.com/bitcoin/bips/blob/master/bip-0174.mediawiki#roles>) for P2WPKH inputs, signed with
/// BIP-143 SIGHASH_ALL. Other input kinds (P2PKH, P2SH, P2WSH, Taproot) are left to other signers;
/// inputs they finalized are extracted as they are.
extension BitcoinPSBT {
    /// Input record types (BIP-174).
    enum InputType {
        static let nonWitnessUTXO: UInt64 = 0x00, witnessUTXO: UInt64 = 0x01, partialSignature: UInt64 = 0x02
        static let sighashType: UInt64 = 0x03, redeemScript: UInt64 = 0x04, witnessScript: UInt64 = 0x05
        static let bip32Derivation: UInt64 = 0x06, finalScriptSig: UInt64 = 0x07, finalScriptWitness: UInt64 = 0x08
        /// What a finalizer clears: every BIP-174 field but the UTXOs and the final scripts.
        static let clearedOnFinalize: Set<UInt64> = [0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0A, 0x0B, 0x0C, 0x0D]
    }

    /// The output input `index` spends: its `witness_utxo`, else the output of its non-witness UTXO; nil
    /// when the PSBT has neither. When both are present they must agree (`invalidEncoding`): BIP-143 signs
    /// the amount, so a witness UTXO that lies about it is refused. (The non-witness UTXO itself was checked
    /// when parsed: its txid is the outpoint's, and the output index exists.) A witness UTXO alone is not
    /// evidence of the amount: see `SigningPolicy`.
    public func spentOutput(input index: Int) throws(ChainError) -> BitcoinTransaction.Output? {
        guard inputs.indices.contains(index) else { throw .invalidEncoding(reason: "input \(index) does not exist") }
        let map = inputs[index]
        var fromTransaction: BitcoinTransaction.Output?
        if let previous = map.value(type: InputType.nonWitnessUTXO) {
            let transaction = try BitcoinTransaction(serialized: previous)
            let spent = Int(unsignedTransaction.inputs[index].outpoint.index)
            guard transaction.outputs.indices.contains(spent) else { throw .invalidEncoding(reason: "input \(index): spent output index out of range") }
            fromTransaction = transaction.outputs[spent]
        }
        guard let witness = map.value(type: InputType.witnessUTXO) else { return fromTransaction }
        let output = try Self.witnessUTXO(witness, "input \(index)")
        if let fromTransaction, fromTransaction != output {
            throw .invalidEncoding(reason: "input \(index): witness UTXO differs from the non-witness UTXO's output")
        }
        return output
    }

    /// Whether input `index` has its final scriptSig or scriptWitness.
    public func isFinalized(input index: Int) -> Bool {
        inputs.indices.contains(index)
            && (inputs[index].value(type: InputType.finalScriptSig) != nil || inputs[index].value(type: InputType.finalScriptWitness) != nil)
    }

    /// Whether every input is finalized (`extractTransaction()` then succeeds).
    public var isFinalized: Bool { inputs.indices.allSatisfy { isFinalized(input: $0) } }

    /// The BIP-143 SIGHASH_ALL hash of P2WPKH input `index` to sign (scriptCode = P2PKH of the key hash,
    /// amount from the spent output). `unsupported` when the input is not P2WPKH or asks for another sighash
    /// type; `invalidEncoding` when the PSBT lacks its UTXO or has a redeemScript or witnessScript for it;
    /// `missingNonWitnessUTXO` when it lacks the previous transaction and `policy` does not allow that
    /// (BIP-143's fee attack: see `SigningPolicy`).
    public func signatureHash(input index: Int, policy: SigningPolicy = .requireNonWitnessUTXO) throws(ChainError) -> Data {
        let hash = try bip143Hash(input: index)
        guard policy.allowWitnessUTXOOnly || inputs[index].value(type: InputType.nonWitnessUTXO) != nil else {
            throw .missingNonWitnessUTXO(input: index)
        }
        return hash
    }

    /// The BIP-143 hash of P2WPKH input `index` whatever its UTXO records (to check a signature already made:
    /// the finalizer, `addSignature`), with `signatureHash(input:policy:)`'s other errors.
    func bip143Hash(input index: Int) throws(ChainError) -> Data {
        guard let spent = try spentOutput(input: index) else { throw .invalidEncoding(reason: "input \(index): no UTXO") }
        guard let keyHash = BitcoinScript.p2wpkhKeyHash(spent.scriptPubKey) else { throw .unsupported(reason: "input \(index) is not P2WPKH") }
        let map = inputs[index]
        guard map.value(type: InputType.redeemScript) == nil, map.value(type: InputType.witnessScript) == nil else {
            throw .invalidEncoding(reason: "input \(index): a P2WPKH output has no redeemScript or witnessScript")
        }
        return try unsignedTransaction.segwitSignatureHash(input: index, scriptCode: try BitcoinScript.p2pkh(keyHash: keyHash),
                                                           amount: spent.amount, sighashType: try sighashType(input: index))
    }

    /// The input's `PSBT_IN_SIGHASH_TYPE`, SIGHASH_ALL when absent.
    func sighashType(input index: Int) throws(ChainError) -> UInt32 {
        guard let value = inputs[index].value(type: InputType.sighashType) else { return BitcoinTransaction.sighashAll }
        return [UInt8](value).reversed().reduce(0) { $0 << 8 | UInt32($1) }
    }

    /// The inputs `sign(publicKey:policy:with:)` signs: not finalized, spending a P2WPKH output of `publicKey`
    /// (compressed, or uncompressed and compressed here: segwit keys are compressed), without this key's
    /// partial signature yet. (Listed whatever the `SigningPolicy`: signing one that the policy refuses fails.)
    public func inputsToSign(publicKey: Data) throws(ChainError) -> [Int] {
        let key = try Self.compressed(publicKey)
        let keyHash = Data(BitcoinEncoding.hash160([UInt8](key)))
        var indices: [Int] = []
        for index in inputs.indices where !isFinalized(input: index) {
            guard let spent = try spentOutput(input: index), BitcoinScript.p2wpkhKeyHash(spent.scriptPubKey) == keyHash,
                  inputs[index].value(type: InputType.partialSignature, keyData: key) == nil
            else { continue }
            indices.append(index)
        }
        return indices
    }

    /// Adds `signature` (the SDK's, over `signatureHash(input: index)`; S made low) as input `index`'s
    /// `PSBT_IN_PARTIAL_SIG` for `publicKey` (DER ‖ 0x01), after checking it with secp256k1
    /// (`signatureMismatch` otherwise: signed with another key, path or hash). `unsupported` or
    /// `invalidEncoding` as `signatureHash(input:policy:)`; `invalidEncoding` when the key already has one.
    /// (The signature already exists, so no `SigningPolicy` applies here: the policy guards making it.)
    public mutating func addSignature(_ signature: Signature, publicKey: Data, input index: Int) throws(ChainError) {
        let key = try Self.compressed(publicKey)
        let hash = try bip143Hash(input: index)
        let bitcoinSignature = try BitcoinSignature(signature, sighashType: UInt8(BitcoinTransaction.sighashAll))
        guard bitcoinSignature.verifies(hash: hash, publicKey: key) else { throw .signatureMismatch }
        try add(Record(type: InputType.partialSignature, keyData: key, value: bitcoinSignature.scriptEncoding), toInput: index)
    }

    /// Signs every input of `inputsToSign(publicKey:)`: its BIP-143 hash is signed by `sign` (the SDK's
    /// signature over a 32-byte hash, e.g. `{ try await session.signature(keyshare: key, message: $0,
    /// chainPath: path) }`) and added by `addSignature` (checked against the key first). An input of the key
    /// that asks for a sighash type other than SIGHASH_ALL is `unsupported` (BIP-174: the signer must
    /// fail); one without its previous transaction is `missingNonWitnessUTXO` unless `policy` allows it
    /// (see `SigningPolicy`). Every input is checked before the first is signed. Returns the indices signed
    /// (empty when no input is the key's). On any error the PSBT is left unchanged.
    @discardableResult
    public mutating func sign(publicKey: Data, policy: SigningPolicy = .requireNonWitnessUTXO,
                              with sign: (Data) async throws -> Signature) async throws -> [Int] {
        var signed = self
        let indices = try inputsToSign(publicKey: publicKey)
        let hashes = try indices.map { index throws(ChainError) in try signatureHash(input: index, policy: policy) }
        for (index, hash) in zip(indices, hashes) {
            try signed.addSignature(try await sign(hash), publicKey: publicKey, input: index)
        }
        self = signed
        return indices
    }

    static func compressed(_ publicKey: Data) throws(ChainError) -> Data {
        guard let point = try? Secp256k1.Point(bytes: [UInt8](publicKey)), let compressed = try? point.compressed() else {
            throw .invalidPublicKey
        }
        return Data(compressed)
    }

    /// BIP-174's Input Finalizer for P2WPKH inputs: an input that is not finalized, spends a P2WPKH output
    /// and has the partial signature of the key whose hash the output names gets `PSBT_IN_FINAL_SCRIPTWITNESS`
    /// = [signature, key] (no final scriptSig: it is empty), and loses every other BIP-174 field except its
    /// UTXOs (partial signatures, sighash type, scripts, BIP 32 derivations, preimages); unknown and
    /// proprietary records stay. The signature is checked first: strict DER, low S, SIGHASH_ALL (matching
    /// `PSBT_IN_SIGHASH_TYPE` if present), valid for the key over the BIP-143 hash (`invalidSignature` or
    /// `signatureMismatch` otherwise; the PSBT is then unchanged). Other inputs are left as they are.
    /// Returns the indices finalized.
    @discardableResult
    public mutating func finalize() throws(ChainError) -> [Int] {
        var finalized = self
        var indices: [Int] = []
        for index in inputs.indices where !isFinalized(input: index) {
            guard let spent = try spentOutput(input: index), let keyHash = BitcoinScript.p2wpkhKeyHash(spent.scriptPubKey),
                  let entry = inputs[index].records(type: InputType.partialSignature).first(where: {
                      $0.keyData.count == 33 && Data(BitcoinEncoding.hash160([UInt8]($0.keyData))) == keyHash
                  })
            else { continue }
            let signature = try BitcoinSignature(scriptEncoding: entry.value)
            guard UInt32(signature.sighashType) == BitcoinTransaction.sighashAll else {
                throw .unsupported(reason: "input \(index): sighash type \(signature.sighashType) (only SIGHASH_ALL)")
            }
            guard signature.verifies(hash: try bip143Hash(input: index), publicKey: entry.keyData) else { throw .signatureMismatch }
            var records = inputs[index].records.filter { !InputType.clearedOnFinalize.contains($0.type) }
            records.append(Record(type: InputType.finalScriptWitness,
                                  value: Data(BitcoinTransaction.witnessBytes([entry.value, entry.keyData]))))
            finalized.inputs[index].records = records
            indices.append(index)
        }
        self = finalized
        return indices
    }

    /// BIP-174's Transaction Extractor: the unsigned transaction with each input's final scriptSig and
    /// scriptWitness (`serialized` is the network transaction, hex for `sendrawtransaction`). `incomplete`
    /// when an input is not finalized.
    public func extractTransaction() throws(ChainError) -> BitcoinTransaction {
        var transaction = unsignedTransaction
        for index in inputs.indices {
            guard isFinalized(input: index) else { throw .incomplete(reason: "input \(index) is not finalized") }
            transaction.inputs[index].scriptSig = inputs[index].value(type: InputType.finalScriptSig) ?? Data()
            if let witness = inputs[index].value(type: InputType.finalScriptWitness) {
                var reader = BitcoinReader([UInt8](witness))
                transaction.inputs[index].witness = try BitcoinTransaction.readWitness(&reader)
            }
        }
        return transaction
    }
}
