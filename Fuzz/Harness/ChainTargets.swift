import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// The chain helpers' decoders of outside bytes (issue 21). Selector % 11: 0 `RLP.decode` (canonical:
/// re-encoding gives the input back), 1 `SignedEthereumTransaction(raw:)` (the raw form round-trips; the
/// sender recovers or fails typed), 2 `EthereumAddress(_:)` of the bytes as UTF-8 text, 3
/// `EthereumSignature(rsv:)` (the `rsv` form round-trips up to v's two spellings), 4
/// `SolanaMessage(serialized:)`, 5 `SolanaTransaction(serialized:)` (the wire form round-trips), 6
/// `SolanaAddress(_:)` of the bytes as UTF-8 text, 7 `EthereumTypedData(json:)` (EIP-712 v4 JSON: the
/// JSON written back reads as the same document, is stable, and hashes the same), 8
/// `BitcoinTransaction(serialized:)` (the consensus form round-trips; the legacy form parses back to the
/// transaction without witnesses), 9 `BitcoinPSBT(serialized:)` (byte-exact round trip, Base64 too; the
/// UTXOs, BIP-143 hashes, finalizer and extractor fail typed or give a PSBT and transaction that parse
/// back), 10 `BitcoinSignature(scriptEncoding:)` (strict DER: re-encoding gives the input back).
enum ChainTargets {
    static let ethereum = FuzzTarget(
        name: "chains",
        summary: "RLP, Ethereum transactions, addresses, rsv signatures and EIP-712 typed data; Solana messages, transactions, addresses; Bitcoin transactions, PSBTs, DER signatures",
        seeds: {
            let legacy = (try? Hex.decode("f86c098504a817c800825208943535353535353535353535353535353535353535880de0b6b3a76400008025a028ef61340bd939bc2195fe537567866003e1a15d3c71ff63e1590620aa636276a067cbe9d8997f761aecb703304b3800ccf555c9f3dc64214b297fb1966a3b6d83")) ?? []
            let dynamic = (try? Hex.decode("02f8720107843b9aca008506fc23ac0082520894353535353535353535353535353535353535353587038d7ea4c6800080c001a002b5bfcd1261e34f2597cce0a9ccf8a95b10dd193947e9c644e04abbd06f14baa04c8ac26805b6461d3ffbc6c7bd6e89894dd688144a9d1ee3b29c66da46f42133")) ?? []
            // A v0 system transfer: header, 3 keys, blockhash, one instruction, no lookups.
            let solanaMessage: [UInt8] = [0x80, 1, 0, 1, 3] + [UInt8](repeating: 1, count: 32) + [UInt8](repeating: 2, count: 32)
                + [UInt8](repeating: 0, count: 32) + [UInt8](repeating: 0xAB, count: 32)
                + [1, 2, 2, 0, 1, 12, 2, 0, 0, 0, 0x40, 0x42, 0x0F, 0, 0, 0, 0, 0, 0]
            let rlp = [UInt8](RLP.encode(.list([.bytes(Data("cat".utf8)), .list([.uint(1024), .bytes(Data())])])))
            // EIP-712: the EIP's Mail example; arrays of structs and of addresses, nested arrays, negative
            // and hex integers, bytesN, escapes; no EIP712Domain with an empty domain.
            let mail = #"{"types":{"EIP712Domain":[{"name":"name","type":"string"},{"name":"version","type":"string"},"#
                + #"{"name":"chainId","type":"uint256"},{"name":"verifyingContract","type":"address"}],"#
                + #""Person":[{"name":"name","type":"string"},{"name":"wallet","type":"address"}],"#
                + #""Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person"},{"name":"contents","type":"string"}]},"#
                + #""primaryType":"Mail","domain":{"name":"Ether Mail","version":"1","chainId":1,"#
                + #""verifyingContract":"0xCcCCccccCCCCcCCCCCCcCcCccCcCCCcCcccccccC"},"message":{"from":{"name":"Cow","#
                + #""wallet":"0xCD2a3d9F938E13CD947Ec05AbC7FE734Df8DD826"},"to":{"name":"Bob","#
                + #""wallet":"0xbBbBBBBbbBBBbbbBbbBbbbbBBbBbbbbBbBbbBBbB"},"contents":"Hello, Bob!"}}"#
            let arrays = #"{"types":{"EIP712Domain":[{"name":"chainId","type":"uint256"},{"name":"salt","type":"bytes32"}],"#
                + #""Person":[{"name":"name","type":"string"},{"name":"wallets","type":"address[]"}],"#
                + #""Mail":[{"name":"from","type":"Person"},{"name":"to","type":"Person[]"},{"name":"grid","type":"int8[2][]"},"#
                + #"{"name":"id","type":"bytes3"},{"name":"blob","type":"bytes"},{"name":"ok","type":"bool"}]},"primaryType":"Mail","#
                + #""domain":{"chainId":"0x1","salt":"0x0000000000000000000000000000000000000000000000000000000000000007"},"#
                + #""message":{"from":{"name":"A\u00e9\"\\\ud83d\ude00","wallets":[]},"to":[{"name":"B","#
                + #""wallets":["0xfb6916095ca1df60bb79ce92ce3ea74c37c5d359"]}],"grid":[[-128,"127"],["-0",0]],"#
                + #""id":"0xabcdef","blob":"0x","ok":true}}"#
            let bare = #"{"types":{"Ping":[{"name":"n","type":"uint256"}]},"primaryType":"Ping","domain":{},"#
                + #""message":{"n":"115792089237316195423570985008687907853269984665640564039457584007913129639935"}}"#
            // BIP-143's Native P2WPKH example: the signed transaction, and a PSBT of it (input 0 finalized by
            // its P2PK scriptSig, input 1 with its witness UTXO and partial signature).
            let bitcoinSigned = (try? Hex.decode("01000000000102fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f00000000494830450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3f9281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed01eeffffffef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa815988ac000247304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee0121025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee635711000000")) ?? []
            let psbt = (try? Hex.decode("70736274ff0100a00100000002fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f0000000000eeffffffef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa815988ac11000000000107494830450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3f9281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed010001011f0046c323000000001600141d0f172a0ecb48aee1be1f2687d2963ae33f71a12202025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee635747304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee01000000")) ?? []
            // BIP-174's PSBT with unknown types in every map.
            let unknownPSBT = (try? Hex.decode("70736274ff01003f0200000001ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff0000000000ffffffff010000000000000000036a0100000000000af00102030405060708090f0102030405060708090a0b0c0d0e0f000af00102030405060708090f0102030405060708090a0b0c0d0e0f000af00102030405060708090f0102030405060708090a0b0c0d0e0f00")) ?? []
            let derSignature = (try? Hex.decode("304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee01")) ?? []
            return [
                [0] + rlp, [0] + legacy, [1] + legacy, [1] + dynamic,
                [2] + Array("0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed".utf8),
                [3] + [UInt8](legacy.suffix(64)) + [27],
                [4] + solanaMessage, [5] + [1] + [UInt8](repeating: 0, count: 64) + solanaMessage,
                [6] + Array("11111111111111111111111111111111".utf8),
                [7] + Array(mail.utf8), [7] + Array(arrays.utf8), [7] + Array(bare.utf8),
                [8] + bitcoinSigned, [9] + psbt, [9] + unknownPSBT, [10] + derSignature,
            ]
        },
        run: { input in
            guard let (selector, bytes) = split(input) else { return }
            switch selector % 11 {
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
            case 6:
                guard let address = try? SolanaAddress(String(decoding: bytes, as: UTF8.self)) else { return }
                accepted()
                expect((try? SolanaAddress(address.base58)) == address, "Solana address round trip")
            case 8:
                guard let transaction = try? BitcoinTransaction(serialized: Data(bytes)) else { return }
                accepted()
                expect([UInt8](transaction.serialized) == bytes, "Bitcoin transaction re-encoding differs from its input")
                var bare = transaction
                for index in bare.inputs.indices { bare.inputs[index].witness = [] }
                expect((try? BitcoinTransaction(legacySerialized: transaction.legacySerialized)) == bare, "legacy form round trip")
                expect(transaction.txid == bare.wtxid, "txid is not the hash of the legacy form")
            case 9:
                guard var psbt = try? BitcoinPSBT(serialized: Data(bytes)) else { return }
                accepted()
                expect([UInt8](psbt.serialized) == bytes, "PSBT re-encoding differs from its input")
                expect((try? BitcoinPSBT(base64: psbt.base64)) == psbt, "PSBT Base64 round trip")
                for index in psbt.inputs.indices {
                    _ = try? psbt.spentOutput(input: index)
                    _ = try? psbt.signatureHash(input: index)
                }
                let before = psbt
                if (try? psbt.finalize()) == nil { expect(psbt == before, "a failed finalize changed the PSBT") }
                expect((try? BitcoinPSBT(serialized: psbt.serialized)) == psbt, "finalized PSBT does not parse back")
                if let transaction = try? psbt.extractTransaction() {
                    expect((try? BitcoinTransaction(serialized: transaction.serialized)) == transaction, "extracted transaction does not parse back")
                    expect(transaction.txid == psbt.unsignedTransaction.txid || transaction.inputs.contains { !$0.scriptSig.isEmpty },
                           "extraction changed the txid without a scriptSig")
                }
            case 10:
                guard let signature = try? BitcoinSignature(scriptEncoding: Data(bytes)) else { return }
                accepted()
                expect([UInt8](signature.scriptEncoding) == bytes, "DER signature re-encoding differs from its input")
            default:
                guard let typed = try? EthereumTypedData(json: Data(bytes)) else { return }
                accepted()
                let again = try? EthereumTypedData(json: typed.json)
                expect(again == typed, "typed data: the JSON written back reads differently")
                expect(again?.json == typed.json, "typed data: the JSON written back is not stable")
                expect(again?.signingHash == typed.signingHash, "typed data: the JSON written back hashes differently")
                expect((try? typed.hashStruct(typed.primaryType, typed.message)) == typed.messageHash, "typed data: hashStruct")
            }
        }
    )
}
