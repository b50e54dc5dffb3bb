import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore
import Testing

/// RLP and signed transactions (legacy/EIP-155, EIP-2930, EIP-1559): the EIP-155 example, and known
/// answers from eth-account for the typed envelopes (the same key and RFC 6979 nonces); strict parsing.
@Suite("Ethereum: RLP and transactions")
struct EthereumTransactionTests {
    /// The EIP-155 example's private key (0x46 × 32).
    static func key() throws -> Secp256k1.Scalar { try Secp256k1.Scalar(bytes: [UInt8](repeating: 0x46, count: 32)) }
    static func recipient() throws -> EthereumAddress { try EthereumAddress(bytes: Data(repeating: 0x35, count: 20)) }

    /// Signs like a wallet with one key (RFC 6979), to compare with the published encodings.
    static func signer(_ hash: Data) throws -> Signature {
        Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: key()))
    }

    static func publicKey() throws -> Data { Data(try Secp256k1.Point(base: key()).compressed()) }

    @Test func rlpKnownAnswers() throws {
        let lorem = Data("Lorem ipsum dolor sit amet, consectetur adipisicing elit".utf8)
        let cases: [(RLP.Item, String)] = [
            (.bytes(Data("dog".utf8)), "83646f67"),
            (.list([.bytes(Data("cat".utf8)), .bytes(Data("dog".utf8))]), "c88363617483646f67"),
            (.bytes(Data()), "80"), (.list([]), "c0"), (.uint(0), "80"), (.uint(15), "0f"), (.uint(1024), "820400"),
            (.list([.list([]), .list([.list([])]), .list([.list([]), .list([.list([])])])]), "c7c0c1c0c3c0c1c0"),
            (.bytes(lorem), "b838" + Hex.encode([UInt8](lorem))),
        ]
        for (item, hex) in cases {
            #expect(Hex.encode([UInt8](RLP.encode(item))) == hex)
            #expect(try RLP.decode(Data(try Hex.decode(hex))) == item)
        }
        // Non-canonical or broken: refused.
        for hex in ["8100", "b800", "b90000", "c1", "83646f", "8364", "c8836361748364", "80ff", "b80100"] {
            #expect(throws: ChainError.self, "\(hex)") { try RLP.decode(Data(try Hex.decode(hex))) }
        }
        // Nesting beyond 32 levels.
        let deep = Data([UInt8](repeating: 0xC1, count: 40) + [0xC0])
        #expect(throws: ChainError.self) { try RLP.decode(deep) }
    }

    @Test func quantities() throws {
        for text in ["0", "1", "255", "256", "1000000000000000000", String(repeating: "9", count: 77)] {
            #expect(try EthereumQuantity(decimal: text).decimal == text)
        }
        #expect(try EthereumQuantity(decimal: "1000000000000000000").bigEndian == Data(try Hex.decode("0de0b6b3a7640000")))
        for bad in ["", "-1", "1e18", "0x10", String(repeating: "9", count: 79),
                    "115792089237316195423570985008687907853269984665640564039457584007913129639936"] {
            #expect(throws: ChainError.self, "\(bad)") { try EthereumQuantity(decimal: bad) }
        }
    }

    @Test func theEIP155ExampleAndTypedEnvelopes() async throws {
        let legacy = try EthereumTransaction(type: .legacy, chainId: 1, nonce: 9, gasPrice: 20_000_000_000, gasLimit: 21000,
                                         to: try Self.recipient(), value: try EthereumQuantity(decimal: "1000000000000000000"))
        #expect(Hex.encode([UInt8](legacy.signingHash)) == "daf5a779ae972f972197303d7b574746c7ef83eadac0f2791ad23db92e4c8e53")
        let dynamic = try EthereumTransaction(type: .dynamicFee, chainId: 1, nonce: 7, maxPriorityFeePerGas: 1_000_000_000,
                                          maxFeePerGas: 30_000_000_000, gasLimit: 21000, to: try Self.recipient(), value: 1_000_000_000_000_000)
        let accessList = try EthereumTransaction(
            type: .accessList, chainId: 5, nonce: 0, gasPrice: 1_000_000_000, gasLimit: 50000, to: try Self.recipient(), value: 1,
            data: Data([1, 2]),
            accessList: [.init(address: try Self.recipient(), storageKeys: [Data(repeating: 0, count: 31) + [7]])])
        let expected = [
            "f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83",
            "02f8720107843b9aca008506fc23ac0082520894353535353535353535353535353535353535353587038d7ea4c6800080c001a002b5bfcd1261e34f2597cce0a9ccf8a95b10dd193947e9c644e04abbd06f14baa04c8ac26805b6461d3ffbc6c7bd6e89894dd688144a9d1ee3b29c66da46f42133",
            "01f8a00580843b9aca0082c35094353535353535353535353535353535353535353501820102f838f7943535353535353535353535353535353535353535e1a0000000000000000000000000000000000000000000000000000000000000000701a088fe80fec64b6ba3a8634d54dbde1219ee10921700017f285c965ce6645ba850a0174d1161102b4a77e326f0bcda5be86cdb24003389f846fca33757d9b9a7d5da",
        ]
        for (transaction, raw) in zip([legacy, dynamic, accessList], expected) {
            let signed = try await transaction.sign(publicKey: try Self.publicKey()) { try Self.signer($0) }
            #expect(Hex.encode([UInt8](signed.raw)) == raw)
            let parsed = try SignedEthereumTransaction(raw: signed.raw)
            #expect(parsed == signed)
            #expect(try parsed.sender() == EthereumAddress(publicKey: try Self.publicKey()))
        }
    }

    @Test func malformedRawTransactionsAreTypedErrors() throws {
        let good = [UInt8](try Hex.decode("02f8720107843b9aca008506fc23ac0082520894353535353535353535353535353535353535353587038d7ea4c6800080c001a002b5bfcd1261e34f2597cce0a9ccf8a95b10dd193947e9c644e04abbd06f14baa04c8ac26805b6461d3ffbc6c7bd6e89894dd688144a9d1ee3b29c66da46f42133"))
        #expect(throws: ChainError.self) { try SignedEthereumTransaction(raw: Data()) }
        #expect(throws: ChainError.self) { try SignedEthereumTransaction(raw: Data([0x03] + good.dropFirst())) }
        #expect(throws: ChainError.self) { try SignedEthereumTransaction(raw: Data(good.dropLast())) }
        #expect(throws: ChainError.self) { try SignedEthereumTransaction(raw: Data(good + [0])) }
        // Every truncation and every single-byte change either fails typed or parses to a signature that
        // recovers to someone else: never a trap.
        for length in 0..<good.count { _ = try? SignedEthereumTransaction(raw: Data(good.prefix(length))) }
        for index in good.indices {
            var altered = good
            altered[index] ^= 0x5A
            _ = try? SignedEthereumTransaction(raw: Data(altered)).sender()
        }
    }

    /// A threshold key (DKLs23 2-of-2, soft path) signs an EIP-1559 transaction through the SDK's closure.
    @Test func aThresholdKeySignsATransaction() async throws {
        var rng = DeterministicRandom(seed: 1559)
        let shares = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)
        let keyshare = try Keyshare(dkls: shares[0], mode: .duo)
        let child = try keyshare.childPublicKey(path: "m/44/60/0/0/0")
        let transaction = try EthereumTransaction(type: .dynamicFee, chainId: 1, nonce: 7, maxPriorityFeePerGas: 1_000_000_000,
                                              maxFeePerGas: 30_000_000_000, gasLimit: 21000, to: try Self.recipient(),
                                              value: 1_000_000_000_000_000)
        let signed = try await transaction.sign(publicKey: child) { hash in
            var rng = SystemRandomNumberGenerator()
            return Signature(ecdsa: try DKLsInProcess.sign(shares, messageHash: [UInt8](hash), path: try DerivationPath("m/44/60/0/0/0"),
                                                           using: &rng))
        }
        #expect(try SignedEthereumTransaction(raw: signed.raw).sender() == EthereumAddress(publicKey: child))
    }
}
