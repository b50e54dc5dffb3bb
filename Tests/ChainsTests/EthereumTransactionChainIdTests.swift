import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore
import Testing

/// Issue 32, finding 13: a legacy transaction's EIP-155 `v = chainId · 2 + 35 + yParity` overflowed 64 bits
/// (a trap in `raw`) for a chain id above (2⁶⁴ − 37) / 2. Such chain ids are refused when the transaction is
/// made (EIP-2294's bound, `UInt64.max / 2 − 36`), and when a raw transaction's `v` implies one.
@Suite("Ethereum: legacy chain ids within EIP-155's 64 bits (issue 32, finding 13)")
struct EthereumTransactionChainIdTests {
    static func key() throws -> Secp256k1.Scalar { try Secp256k1.Scalar(bytes: [UInt8](repeating: 0x46, count: 32)) }
    static func publicKey() throws -> Data { Data(try Secp256k1.Point(base: key()).compressed()) }
    static func signer(_ hash: Data) throws -> Signature { Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: key())) }

    static func transaction(_ type: EthereumTransaction.TransactionType, chainId: UInt64) throws(ChainError) -> EthereumTransaction {
        try EthereumTransaction(type: type, chainId: chainId, nonce: 0, gasPrice: 1, maxPriorityFeePerGas: 1, maxFeePerGas: 1,
                                gasLimit: 21000, to: nil, value: 0)
    }

    @Test func finding13_legacyChainIdAboveTheBoundIsRefused() async throws {
        let maximum = EthereumTransaction.maximumLegacyChainId
        #expect(maximum == 9_223_372_036_854_775_771)
        // (2⁶⁴ − 36) / 2 traps for yParity 1, UInt64.max / 2 for both; all above the bound are refused when made.
        for chainId in [maximum + 1, (UInt64.max - 35) / 2, UInt64.max / 2, UInt64.max] {
            #expect(throws: ChainError.chainIdOutOfRange(chainId: chainId, maximum: maximum), "\(chainId)") {
                try Self.transaction(.legacy, chainId: chainId)
            }
        }
        // At the bound: signed, raw, parsed back (v = 2⁶⁴ − 37 + yParity fits).
        let top = try Self.transaction(.legacy, chainId: maximum)
        let signed = try await top.sign(publicKey: try Self.publicKey(), with: Self.signer)
        #expect(try SignedEthereumTransaction(raw: signed.raw).raw == signed.raw)
        #expect(try SignedEthereumTransaction(raw: signed.raw).transaction.chainId == maximum)
        // Typed envelopes carry the chain id as it is: any UInt64.
        for type in [EthereumTransaction.TransactionType.accessList, .dynamicFee] {
            let typed = try await Self.transaction(type, chainId: UInt64.max).sign(publicKey: try Self.publicKey(), with: Self.signer)
            #expect(try SignedEthereumTransaction(raw: typed.raw).raw == typed.raw)
            #expect(try SignedEthereumTransaction(raw: typed.raw).transaction.chainId == UInt64.max)
        }
        // A raw legacy transaction whose v implies a chain id above the bound: refused when parsed, no trap.
        let word = RLP.Item.bytes(Data(repeating: 0x11, count: 32))
        let raw = RLP.encode(.list([.uint(0), .uint(1), .uint(21000), .bytes(Data()), .uint(0), .bytes(Data()), .uint(UInt64.max), word, word]))
        #expect(throws: ChainError.chainIdOutOfRange(chainId: (UInt64.max - 35) / 2, maximum: maximum)) {
            try SignedEthereumTransaction(raw: raw)
        }
    }
}
