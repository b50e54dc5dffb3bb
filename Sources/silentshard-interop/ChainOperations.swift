import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore

/// Chain helpers (issue 21) for the interop suite: artifacts made with in-process threshold keys, for
/// the chains' own libraries to check.
enum ChainOperations {
    /// `{seed, path, messages: [hex]}` → a 2-of-2 DKLs23 key's child at `path`: its compressed public
    /// key, its EIP-55 address, and the `personal_sign` signature (`r ‖ s ‖ v`, v = 27/28) of each message,
    /// each checked by the SDK (it recovers to the address) before it is returned.
    static func ethereumPersonalSign(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let (shares, child, derivation) = try thresholdChild(input, rng: &rng)
        var signatures: [JSONValue] = []
        let address = try EthereumAddress(publicKey: child)
        for message in try input.byteArrays("messages") {
            let hash = EthereumPersonalMessage.hash(Data(message))
            let signature = try EthereumSignature(Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](hash),
                                                                                         path: derivation, using: &rng)))
            guard try EthereumPersonalMessage.signer(of: Data(message), signature: signature) == address else {
                throw ChainError.signatureMismatch
            }
            signatures.append(.hex([UInt8](signature.rsv)))
        }
        return .object([
            "publicKey": .hex([UInt8](child)),
            "address": .string(address.checksummed),
            "signatures": .array(signatures),
        ])
    }

    /// `{seed, path, documents: [text]}` (each an `eth_signTypedData_v4` JSON document, as text so that
    /// big integers arrive exactly) → a 2-of-2 DKLs23 key's child at `path`: its compressed public key, its
    /// EIP-55 address, and for each document the SDK's domain separator, message hash, signing hash, the
    /// signature (`r ‖ s ‖ v`, v = 27/28; it recovers to the address, checked by the SDK) and the document
    /// as the SDK writes it back.
    static func ethereumTypedData(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let (shares, child, derivation) = try thresholdChild(input, rng: &rng)
        let address = try EthereumAddress(publicKey: child)
        guard case .array(let documents)? = input.value["documents"] else { throw InteropError.missingField("documents") }
        var results: [JSONValue] = []
        for document in documents {
            guard case .string(let text) = document else { throw InteropError.wrongType(field: "documents", expected: "array of strings") }
            let typed = try EthereumTypedData(json: text)
            let signature = try EthereumSignature(Signature(ecdsa: try DKLsInProcess.sign(
                shares, messageHash: [UInt8](typed.signingHash), path: derivation, using: &rng)))
            guard try typed.recoverAddress(signature: signature) == address else { throw ChainError.signatureMismatch }
            guard try EthereumTypedData(json: typed.json) == typed else {
                throw ChainError.invalidEncoding(reason: "typed data: the JSON written back reads differently")
            }
            results.append(.object([
                "domainSeparator": .hex([UInt8](typed.domainSeparator)),
                "messageHash": .hex([UInt8](typed.messageHash)),
                "signingHash": .hex([UInt8](typed.signingHash)),
                "signature": .hex([UInt8](signature.rsv)),
                "json": .string(typed.jsonText),
            ]))
        }
        return .object([
            "publicKey": .hex([UInt8](child)),
            "address": .string(address.checksummed),
            "documents": .array(results),
        ])
    }

    /// `{seed, path, transactions: [{type, chainId, nonce, gasPrice?, maxPriorityFeePerGas?, maxFeePerGas?,
    /// gas, to (hex or ""), value (decimal), data (hex), accessList: [{address, storageKeys}]}]}` → a
    /// 2-of-2 DKLs23 key's child at `path`: its address and each transaction signed (raw hex), checked
    /// by the SDK (it parses back, recovers to the address) before it is returned.
    static func ethereumTransactions(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let (shares, child, derivation) = try thresholdChild(input, rng: &rng)
        let address = try EthereumAddress(publicKey: child)
        guard case .array(let requests)? = input.value["transactions"] else { throw InteropError.missingField("transactions") }
        var raws: [JSONValue] = []
        for request in requests {
            let fields = CaseInput(value: request)
            let type: EthereumTransaction.TransactionType
            switch try fields.int("type", in: 0...2) {
            case 0: type = .legacy
            case 1: type = .accessList
            default: type = .dynamicFee
            }
            func quantity(_ name: String) throws -> EthereumQuantity {
                try EthereumQuantity(decimal: fields.optionalString(name) ?? "0")
            }
            let toText = try fields.string("to")
            var entries: [EthereumTransaction.AccessListEntry] = []
            if case .array(let list)? = fields.value["accessList"] {
                for entry in list {
                    let entryInput = CaseInput(value: entry)
                    entries.append(.init(address: try EthereumAddress(try entryInput.string("address")),
                                         storageKeys: try entryInput.byteArrays("storageKeys").map { Data($0) }))
                }
            }
            let transaction = try EthereumTransaction(
                type: type, chainId: UInt64(try fields.int("chainId", in: 1...Int(Int32.max))),
                nonce: UInt64(try fields.int("nonce", in: 0...Int(Int32.max))), gasPrice: try quantity("gasPrice"),
                maxPriorityFeePerGas: try quantity("maxPriorityFeePerGas"), maxFeePerGas: try quantity("maxFeePerGas"),
                gasLimit: UInt64(try fields.int("gas", in: 21000...30_000_000)),
                to: toText.isEmpty ? nil : try EthereumAddress(toText), value: try quantity("value"),
                data: Data(try fields.bytes("data")), accessList: entries)
            let signature = try EthereumSignature(Signature(ecdsa: try DKLsInProcess.sign(
                shares, messageHash: [UInt8](transaction.signingHash), path: derivation, using: &rng)))
            let signed = SignedEthereumTransaction(transaction: transaction, signature: signature)
            let parsed = try SignedEthereumTransaction(raw: signed.raw)
            guard parsed == signed, try parsed.sender() == address else { throw ChainError.signatureMismatch }
            raws.append(.hex([UInt8](signed.raw)))
        }
        return .object(["address": .string(address.checksummed), "raws": .array(raws)])
    }

    /// A 2-of-2 DKLs23 key (from `rng`) and its soft child at the case's `path` (default "m").
    private static func thresholdChild(_ input: CaseInput, rng: inout DeterministicRandom)
        throws -> (shares: [DKLsKeyshare], child: Data, path: DerivationPath) {
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let path = try input.optionalString("path") ?? "m"
        return (shares, try Keyshare(dkls: shares[0], mode: .duo).childPublicKey(path: path), try DerivationPath(path))
    }

    /// `{publicKey (hex), network}` → `{p2wpkh, p2pkh}`.
    static func bitcoinAddresses(_ input: CaseInput) throws -> JSONValue {
        guard let network = BitcoinNetwork(rawValue: try input.string("network")) else {
            throw InteropError.wrongType(field: "network", expected: "mainnet, testnet or regtest")
        }
        let key = Data(try input.bytes("publicKey"))
        return .object([
            "p2wpkh": .string(try BitcoinAddress.p2wpkh(publicKey: key, network: network)),
            "p2pkh": .string(try BitcoinAddress.p2pkh(publicKey: key, network: network)),
        ])
    }

    /// `{seed, path, network?, psbt?: base64}` → a 2-of-2 DKLs23 key's child at `path`: its compressed public
    /// key and P2WPKH address (`network`, default regtest) and, given a version-0 PSBT, the inputs the SDK
    /// signs (every P2WPKH input of the key: BIP-143 hash under the default `SigningPolicy`, so each needs its
    /// previous transaction; threshold signature, checked and added as a partial signature), the PSBT after signing and after finalizing (base64), and the extracted signed
    /// transaction (hex), checked by the SDK (it parses back, and every input is finalized).
    static func bitcoinPSBT(_ input: CaseInput) throws -> JSONValue {
        var rng = DeterministicRandom(seed: UInt64(try input.int("seed", in: 0...Int(Int32.max))))
        let (shares, child, derivation) = try thresholdChild(input, rng: &rng)
        guard let network = BitcoinNetwork(rawValue: try input.optionalString("network") ?? "regtest") else {
            throw InteropError.wrongType(field: "network", expected: "mainnet, testnet or regtest")
        }
        var result: [String: JSONValue] = [
            "publicKey": .hex([UInt8](child)),
            "address": .string(try BitcoinAddress.p2wpkh(publicKey: child, network: network)),
        ]
        guard let text = try input.optionalString("psbt") else { return .object(result) }
        var psbt = try BitcoinPSBT(base64: text)
        let indices = try psbt.inputsToSign(publicKey: child)
        for index in indices {
            let signature = Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](try psbt.signatureHash(input: index)),
                                                                    path: derivation, using: &rng))
            try psbt.addSignature(signature, publicKey: child, input: index)
        }
        let signed = psbt
        try psbt.finalize()
        let transaction = try psbt.extractTransaction()
        guard try BitcoinPSBT(base64: psbt.base64) == psbt, try BitcoinTransaction(serialized: transaction.serialized) == transaction else {
            throw ChainError.invalidEncoding(reason: "PSBT or transaction: does not parse back")
        }
        result["signedInputs"] = .array(indices.map { .int($0) })
        result["signed"] = .string(signed.base64)
        result["finalized"] = .string(psbt.base64)
        result["transaction"] = .hex([UInt8](transaction.serialized))
        result["txid"] = .string(transaction.txidHex)
        return .object(result)
    }

    /// `{seed (hex, 32 bytes), path, messages?: [hex]}` → a 2-of-2 FROST key's child at `path` (its
    /// public key and base58 address) and, for each serialized message, the wire transaction it signs
    /// (hex), checked by the SDK (`isFullySigned`) before it is returned.
    static func solanaSign(_ input: CaseInput) throws -> JSONValue {
        var rng = try DeterministicRandom(seed: input.bytes("seed"))
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        let path = try input.optionalString("path") ?? "m"
        let child = try Keyshare(frost: shares[0], mode: .duo).childPublicKey(path: path)
        let indices = try FROST.Derivation.parse(path)
        var transactions: [JSONValue] = []
        if case .array? = input.value["messages"] {
            for message in try input.byteArrays("messages") {
                var transaction = SolanaTransaction(message: try SolanaMessage(serialized: Data(message)))
                let signature = try Signature(eddsa: Data(try FROST.LocalRun.sign(shares, signers: [0, 1], message: message,
                                                                                  path: indices, using: &rng)))
                try transaction.add(signature, publicKey: child)
                guard transaction.isFullySigned else { throw ChainError.signatureMismatch }
                transactions.append(.hex([UInt8](transaction.serialized)))
            }
        }
        return .object(["publicKey": .hex([UInt8](child)), "address": .string(try SolanaAddress(publicKey: child).base58),
                        "transactions": .array(transactions)])
    }
}
