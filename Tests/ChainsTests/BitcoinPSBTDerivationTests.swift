import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore
import Testing

/// PSBT inputs found by their BIP-32 key origins (BIP-174 `PSBT_IN_BIP32_DERIVATION`): only a record with our
/// master fingerprint, a soft path, and a key that path really derives to — the key the output pays to — is
/// signed; every signature verifies under BIP-143.
@Suite("Bitcoin PSBT: inputs by BIP-32 derivation")
struct BitcoinPSBTDerivationTests {
    /// One private key per path (stands in for the SDK's soft derivation of a threshold key).
    struct Wallet {
        let keys: [String: Secp256k1.Scalar]
        func publicKey(_ path: String) throws -> Data {
            guard let key = keys[path] else { throw ChainError.invalidPublicKey }
            return Data(try Secp256k1.Point(base: key).compressed())
        }
        func sign(_ hash: Data, _ path: String) throws -> Signature {
            guard let key = keys[path] else { throw ChainError.invalidPublicKey }
            return Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: key))
        }
    }

    @Test func signsOnlyInputsWhoseOriginDerivesToTheirKey() async throws {
        let paths = ["m/84/1/0/0/0", "m/84/1/0/0/1", "m/84/1/0/1/0"]
        let wallet = Wallet(keys: Dictionary(uniqueKeysWithValues: paths.map { ($0, Secp256k1.Scalar.random()) }))
        let fingerprint = Data([0xD3, 0x4D, 0xB3, 0x3F]), other = Data([1, 2, 3, 4])
        // Inputs: 0 ours; 1 ours but the record names a hardened path; 2 the record's key is not what its path
        // derives to; 3 another wallet's fingerprint; 4 ours at another soft path.
        let cases: [(payTo: String, recordKey: String, fingerprint: Data, path: [UInt32])] = [
            (paths[0], paths[0], fingerprint, [84, 1, 0, 0, 0]),
            (paths[1], paths[1], fingerprint, [84 | 0x8000_0000, 1, 0, 0, 1]),
            (paths[1], paths[2], fingerprint, [84, 1, 0, 0, 1]),
            (paths[0], paths[0], other, [84, 1, 0, 0, 0]),
            (paths[2], paths[2], fingerprint, [84, 1, 0, 1, 0]),
        ]
        // Each input spends output `index` of its own previous transaction (in the PSBT: BIP-143's fee attack).
        let previous = try cases.indices.map { index in
            let script = try BitcoinScript.p2wpkh(keyHash: BitcoinAddress.keyHash(publicKey: try wallet.publicKey(cases[index].payTo)))
            return BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: Data(SecureRandom.bytes(count: 32)), index: 0))],
                                      outputs: Array(repeating: .init(amount: 1, scriptPubKey: Data([0x6A])), count: index)
                                          + [.init(amount: 20_000, scriptPubKey: script)])
        }
        let inputs = try cases.indices.map { index in
            BitcoinTransaction.Input(outpoint: try BitcoinTransaction.OutPoint(txid: previous[index].txid, index: UInt32(index)),
                                     sequence: 0xFFFF_FFFD)
        }
        let transaction = BitcoinTransaction(inputs: inputs, outputs: [.init(amount: 90_000, scriptPubKey: try BitcoinScript.p2wpkh(
            keyHash: BitcoinAddress.keyHash(publicKey: try wallet.publicKey(paths[0]))))])
        var psbt = try BitcoinPSBT(unsignedTransaction: transaction)
        for (index, item) in cases.enumerated() {
            let script = try BitcoinScript.p2wpkh(keyHash: BitcoinAddress.keyHash(publicKey: try wallet.publicKey(item.payTo)))
            try psbt.add(.init(type: 0x00, value: previous[index].serialized), toInput: index)
            try psbt.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(.init(amount: 20_000, scriptPubKey: script))), toInput: index)
            let origin = BitcoinPSBT.KeyOrigin(publicKey: try wallet.publicKey(item.recordKey), fingerprint: item.fingerprint,
                                               path: item.path)
            #expect(origin.record.type == 0x06 && origin.record.value.count == 4 + 4 * item.path.count)
            try psbt.add(origin.record, toInput: index)
        }
        let reparsed = try BitcoinPSBT(base64: psbt.base64)
        #expect(reparsed.keyOrigins(input: 1).first?.pathString == "m/84'/1/0/0/1")
        #expect(reparsed.keyOrigins(input: 4).first?.path == [84, 1, 0, 1, 0])

        let signed = try await psbt.sign(masterFingerprint: fingerprint, childPublicKey: wallet.publicKey) { hash, path in
            try wallet.sign(hash, path)
        }
        #expect(signed == [0, 4])
        for index in signed {
            let key = try wallet.publicKey(cases[index].payTo)
            let value = try #require(psbt.inputs[index].value(type: 0x02, keyData: key))
            #expect(try BitcoinSignature(scriptEncoding: value).verifies(hash: try psbt.signatureHash(input: index), publicKey: key))
        }
        #expect(try psbt.finalize() == [0, 4])
        // A fingerprint of the wrong length is refused and changes nothing.
        let before = psbt
        await #expect(throws: ChainError.self) {
            _ = try await psbt.sign(masterFingerprint: Data([1, 2, 3]), childPublicKey: wallet.publicKey) { hash, path in try wallet.sign(hash, path) }
        }
        #expect(psbt == before)
        #expect(try BitcoinPSBT.fingerprint(of: try wallet.publicKey(paths[0])).count == 4)
    }
}
