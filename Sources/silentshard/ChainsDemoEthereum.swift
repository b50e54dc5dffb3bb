import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// The Ethereum entry of `silentshard demo --chains`: address, `personal_sign`, EIP-712 v4 typed data and
/// an EIP-1559 transfer, each recovered to the address before it is written.
enum ChainsDemoEthereum {
    /// One path's entry for `keyshare` (an ECDSA key of `party`).
    static func entry(party: ChainsDemo.Party, keyshare: Keyshare, path: String) async throws -> JSONValue {
        let publicKey = try SilentShard.ECDSA.deriveChildPublicKey(keyshare: keyshare, path: path)
        let address = try EthereumAddress(publicKey: publicKey)
        let sign: (Data) async throws -> Signature = { try await party.sign(keyshare, $0, path) }
        let what = "ethereum \(party.mode) \(path)"

        // personal_sign of a fresh UTF-8 message.
        let text = "SilentShard \(party.mode) sign-in \(ChainsDemo.word(8)) nonce \(Hex.encode([UInt8](ChainsDemo.random(8)))) ✓"
        let personal = try await EthereumPersonalMessage.sign(Data(text.utf8), publicKey: publicKey, with: sign)
        try ChainsDemo.check(try EthereumPersonalMessage.signer(of: Data(text.utf8), signature: personal) == address,
                             "\(what) personal_sign")

        // EIP-712 v4 typed data: a domain with chainId and verifyingContract, a nested struct and an array.
        let typed = try EthereumTypedData(json: typedDataJSON(from: address))
        let typedSignature = try await typed.sign(publicKey: publicKey, with: sign)
        try ChainsDemo.check(try typed.recoverAddress(signature: typedSignature) == address, "\(what) typed data")

        // EIP-1559 transfer on chain 1.
        let transaction = try EthereumTransaction(
            type: .dynamicFee, chainId: 1, nonce: ChainsDemo.random(in: 0...1_000_000),
            maxPriorityFeePerGas: 1_000_000_000, maxFeePerGas: 30_000_000_000, gasLimit: 21_000,
            to: try EthereumAddress(bytes: ChainsDemo.random(20)),
            value: EthereumQuantity(ChainsDemo.random(in: 1...5_000_000_000_000_000_000)))
        let signed = try await transaction.sign(publicKey: publicKey, with: sign)
        let parsed = try SignedEthereumTransaction(raw: signed.raw)
        try ChainsDemo.check(parsed.transaction == transaction && (try parsed.sender()) == address, "\(what) raw transaction")
        guard let recipient = transaction.to else { throw ChainsDemo.Failure("chains demo: \(what): no recipient") }

        return .object([
            "chain": .string("ethereum"), "mode": .string(party.mode), "path": .string(path),
            "publicKey": .string(Hex.encode([UInt8](publicKey))), "address": .string(address.checksummed),
            "personalSign": .object(["message": .string(text), "signature": .string(ChainsDemo.hex0x(personal.rsv))]),
            "typedData": .object(["data": .raw(typed.jsonText), "signature": .string(ChainsDemo.hex0x(typedSignature.rsv))]),
            "transaction": .object([
                "type": .integer("2"), "chainId": .integer(String(transaction.chainId)),
                "nonce": .integer(String(transaction.nonce)),
                "maxPriorityFeePerGas": .integer(transaction.maxPriorityFeePerGas.decimal),
                "maxFeePerGas": .integer(transaction.maxFeePerGas.decimal), "gas": .integer(String(transaction.gasLimit)),
                "to": .string(recipient.checksummed), "value": .integer(transaction.value.decimal),
                "data": .string(ChainsDemo.hex0x(transaction.data)), "raw": .string(ChainsDemo.hex0x(signed.raw)),
            ]),
        ])
    }

    /// A random `eth_signTypedData_v4` document: a `Mail` from `Person` (the signer) to a `Person[]`, with a
    /// `uint256` amount, under a domain with name, version, chainId 1 and a random verifyingContract.
    static func typedDataJSON(from signer: EthereumAddress) throws -> String {
        func person(_ wallet: String) -> String {
            "{\"name\":\(JSONValue.string(ChainsDemo.word(6)).serialized),\"wallet\":\"\(wallet)\"}"
        }
        let recipients = (0..<Int(ChainsDemo.random(in: 1...3))).map { _ in
            person(ChainsDemo.hex0x(ChainsDemo.random(20)))
        }
        let contract = try EthereumAddress(bytes: ChainsDemo.random(20))
        let amount = EthereumQuantity(ChainsDemo.random(in: 0...UInt64.max))
        return """
            {"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},\
            {"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],\
            "Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],\
            "Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person[]"},{"name":"contents","type":"string"},\
            {"name":"amount","type":"uint256"}]},\
            "primaryType":"Mail",\
            "domain":{"name":"SilentShard demo","version":"1","chainId":1,"verifyingContract":"\(contract.checksummed)"},\
            "message":{"from":\(person(signer.checksummed)),"to":[\(recipients.joined(separator: ","))],\
            "contents":"\(ChainsDemo.word(12)) \(ChainsDemo.word(5))","amount":"\(amount.decimal)"}}
            """
    }
}
