import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// The chain helpers' decoders of outside bytes (issue 21). Selector % 7: 0 `RLP.decode` (canonical:
/// re-encoding gives the input back), 1 `SignedEthereumTransaction(raw:)` (the raw form round-trips; the
/// sender recovers or fails typed), 2 `EthereumAddress(_:)` of the bytes as UTF-8 text, 3
/// `EthereumSignature(rsv:)` (the `rsv` form round-trips up to v's two spellings), 4
/// `SolanaMessage(serialized:)`, 5 `SolanaTransaction(serialized:)` (the wire form round-trips), 6
/// `SolanaAddress(_:)` of the bytes as UTF-8 text.
enum ChainTargets {
    static let ethereum = FuzzTarget(
        name: "chains",
        summary: "RLP, Ethereum transactions, addresses and rsv signatures; Solana messages, transactions, addresses",
        seeds: {
            let legacy = (try? Hex.decode("f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")) ?? []
            let dynamic = (try? Hex.decode("02f8720107843b9aca008506fc23ac0082520894353535353535353535353535353535353535353587038d7ea4c6800080c001a002b5bfcd1261e34f2597cce0a9ccf8a95b10dd193947e9c644e04abbd06f14baa04c8ac26805b6461d3ffbc6c7bd6e89894dd688144a9d1ee3b29c66da46f42133")) ?? []
            // A v0 system transfer: header, 3 keys, blockhash, one instruction, no lookups.
            let solanaMessage: [UInt8] = [0x80, 1, 0, 1, 3] + [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 2, count: 32)
                + [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 0xAB, count: 32)
                + [1, 2, 2, 0, 1, 12, 2, 0, 0, 0, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0, 0]
            let rlp = [UInt8](RLP.encode(.list([.bytes(Data("cat".utf8)), .list([.uint(1024), .bytes(Data())])])))
            return [
                [0] + rlp, [0] + legacy, [1] + legacy, [1] + dynamic,
                [2] + Array("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".utf8),
                [3] + [UInt8](legacy.suffix(64)) + [27],
                [4] + solanaMessage, [5] + [1] + [UInt8](repeating: 0, count: 64) + solanaMessage,
                [6] + Array("11111111111111111111111111111111".utf8),
            ]
        },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 7 {
            case 0:
                guard let item = try? RLP.decode(Data(bytes)) else { return }
                accepted()
                expect([UInt8](RLP.encode(item)) == bytes, "RLP re-encoding differs from its canonical input")
            case 1:
                guard let transaction = try? SignedEthereumTransaction(raw: Data(bytes)) else { return }
                accepted()
                expect([UInt8](transaction.raw) == bytes, "transaction re-encoding differs from its input")
                _ = try? transaction.sender()
            case 2:
                guard let address = try? EthereumAddress(String(decoding: bytes, as: UTF8.self)) else { return }
                accepted()
                expect((try? EthereumAddress(address.checksummed)) == address, "address round trip")
            case 3:
                guard let signature = try? EthereumSignature(rsv: Data(bytes)) else { return }
                accepted()
                expect((try? EthereumSignature(rsv: signature.rsv)) == signature, "signature round trip")
            case 4:
                guard let message = try? SolanaMessage(serialized: Data(bytes)) else { return }
                accepted()
                expect(message.signers.count == message.requiredSignatures, "signers and header disagree")
            case 5:
                guard let transaction = try? SolanaTransaction(serialized: Data(bytes)) else { return }
                accepted()
                expect([UInt8](transaction.serialized) == bytes, "Solana wire form re-encoding differs from its input")
                _ = transaction.isFullySigned
            default:
                guard let address = try? SolanaAddress(String(decoding: bytes, as: UTF8.self)) else { return }
                accepted()
                expect((try? SolanaAddress(address.base58)) == address, "Solana address round trip")
            }
        }
    )
}
