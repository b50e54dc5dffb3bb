import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// The chain helpers' decoders of outside bytes (issue 21). Selector % 4: 0 `RLP.decode` (canonical:
/// re-encoding gives the input back), 1 `SignedEthereumTransaction(raw:)` (the raw form round-trips; the
/// sender recovers or fails typed), 2 `EthereumAddress(_:)` of the bytes as UTF-8 text, 3
/// `EthereumSignature(rsv:)` (the `rsv` form round-trips up to v's two spellings).
enum ChainTargets {
    static let ethereum = FuzzTarget(
        name: "chains",
        summary: "RLP.decode, SignedEthereumTransaction(raw:), EthereumAddress(_:), EthereumSignature(rsv:)",
        seeds: {
            let legacy = (try? Hex.decode("f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")) ?? []
            let dynamic = (try? Hex.decode("02f8720107843b9aca008506fc23ac0082520894353535353535353535353535353535353535353587038d7ea4c6800080c001a002b5bfcd1261e34f2597cce0a9ccf8a95b10dd193947e9c644e04abbd06f14baa04c8ac26805b6461d3ffbc6c7bd6e89894dd688144a9d1ee3b29c66da46f42133")) ?? []
            let rlp = [UInt8](RLP.encode(.list([.bytes(Data("cat".utf8)), .list([.uint(1024), .bytes(Data())])])))
            return [
                [0] + rlp, [0] + legacy, [1] + legacy, [1] + dynamic,
                [2] + Array("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".utf8),
                [3] + [UInt8](legacy.suffix(64)) + [27],
            ]
        },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 4 {
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
            default:
                guard let signature = try? EthereumSignature(rsv: Data(bytes)) else { return }
                accepted()
                expect((try? EthereumSignature(rsv: signature.rsv)) == signature, "signature round trip")
            }
        }
    )
}
