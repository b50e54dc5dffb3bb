import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore
import Testing

/// Bitcoin transactions (BIP-144), the BIP-143 signature hash and BIP-174 PSBTs: BIP-143's "Native
/// P2WPKH" example (<https://github.com/bitcoin/bips/blob/master/bip-0143.mediawiki#native-p2wpkh>: its
/// unsigned transaction, sighash, RFC 6979 signature and signed transaction, reached through a PSBT), the
/// BIP-174 test vectors (`BIP174Vectors`), and strict rejections; `interop/test_chains.py` checks random
/// threshold-signed PSBTs with embit.
@Suite("Bitcoin: transactions, BIP-143 and PSBT")
struct BitcoinPSBTTests {
    static func bytes(_ hex: String) throws -> Data { Data(try Hex.decode(hex)) }

    // BIP-143, "Native P2WPKH".
    static let unsignedHex = "0100000002fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f0000000000eeffffff"
        + "ef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a0100000000ffffffff02202cb206000000001976a914"
        + "8280b37df378db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde42dbee7e4dbe6a21b2d50ce2f0167faa8159"
        + "88ac11000000"
    static let p2pkScriptSig = "4830450221008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3f9"
        + "281a99f2b1c0a19c0489bc22ede944ccf4ecbab4cc618ef3ed01"
    static let signedHex = "01000000000102fff7f7881a8099afa6940d42d1e7f6362bec38171ea3edf433541db4e4ad969f00000000494830450221"
        + "008b9d1dc26ba6a9cb62127b02742fa9d754cd3bebf337f7a55d114c8e5cdd30be022040529b194ba3f9281a99f2b1c0a19c0489bc22"
        + "ede944ccf4ecbab4cc618ef3ed01eeffffffef51e1b804cc89d182d279655c3aa89e815b1b309fe287d9b2b55d57b90ec68a01000000"
        + "00ffffffff02202cb206000000001976a9148280b37df378db99f66f85c95a783a76ac7a6d5988ac9093510d000000001976a9143bde"
        + "42dbee7e4dbe6a21b2d50ce2f0167faa815988ac000247304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366"
        + "d7f01cc44a0220573a954c4518331561406f90300e8f3358f51928d43c212a8caed02de67eebee0121025476c2e83188368da1ff3e29"
        + "2e7acafcdb3566bb0ad253f62fc70f07aeee635711000000"
    static let signatureHex = "304402203609e17b84f6a7d30c80bfa610b5b4542f32a8a0d5447a12fb1366d7f01cc44a0220573a954c45183315"
        + "61406f90300e8f3358f51928d43c212a8caed02de67eebee"
    static let privateKeyHex = "619c335025c7f4012e556c2a58b2506e30b8511b53ade95ea316fd8c3286feb9"
    static let publicKeyHex = "025476c2e83188368da1ff3e292e7acafcdb3566bb0ad253f62fc70f07aeee6357"

    /// A wallet's one-key signer (RFC 6979, as the BIP's examples).
    static func signer(_ keyHex: String) -> @Sendable (Data) async throws -> Signature {
        { hash in Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: try Secp256k1.Scalar(bytes: try Hex.decode(keyHex)))) }
    }

    static func publicKey(_ keyHex: String) throws -> Data {
        Data(try Secp256k1.Point(base: try Secp256k1.Scalar(bytes: try Hex.decode(keyHex))).compressed())
    }

    @Test func bip143NativeP2WPKHSighashAndSignature() throws {
        let transaction = try BitcoinTransaction(serialized: try Self.bytes(Self.unsignedHex))
        #expect(transaction.serialized == (try Self.bytes(Self.unsignedHex)))
        #expect(transaction.version == 1 && transaction.lockTime == 17 && transaction.inputs.count == 2 && transaction.outputs.count == 2)
        #expect(transaction.inputs[0].sequence == 0xFFFF_FFEE)
        let keyHash = try BitcoinAddress.keyHash(publicKey: try Self.bytes(Self.publicKeyHex))
        #expect(Hex.encode([UInt8](keyHash)) == "1d0f172a0ecb48aee1be1f2687d2963ae33f71a1")
        let hash = try transaction.segwitSignatureHash(input: 1, scriptCode: try BitcoinScript.p2pkh(keyHash: keyHash), amount: 600_000_000)
        #expect(Hex.encode([UInt8](hash)) == "c37af31116d1b27caf68aae9e3ac82f1477929014d5b917657d0eb49478cb670")
        let signature = try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: try Secp256k1.Scalar(bytes: try Hex.decode(Self.privateKeyHex)))
        #expect(Hex.encode(signature.der) == Self.signatureHex)

        let signed = try BitcoinTransaction(serialized: try Self.bytes(Self.signedHex))
        #expect(signed.serialized == (try Self.bytes(Self.signedHex)))
        #expect(signed.wtxid != signed.txid && signed.inputs[1].witness.count == 2)
        #expect(signed.legacySerialized.count < signed.serialized.count)
        #expect(throws: ChainError.unsupported(reason: "sighash type 3 (only SIGHASH_ALL)")) {
            try transaction.segwitSignatureHash(input: 1, scriptCode: Data(), amount: 1, sighashType: 3)
        }
        #expect(throws: ChainError.invalidEncoding(reason: "input 2 does not exist")) {
            try transaction.segwitSignatureHash(input: 2, scriptCode: Data(), amount: 1)
        }
    }

    /// The same example through BIP-174's roles: Creator, Updater (the P2PK input already finalized by
    /// another signer, the P2WPKH input's witness UTXO), Signer, Input Finalizer, Extractor: the BIP's
    /// signed transaction byte for byte.
    @Test func bip143NativeP2WPKHThroughAPSBT() async throws {
        let unsigned = try BitcoinTransaction(serialized: try Self.bytes(Self.unsignedHex))
        var psbt = try BitcoinPSBT(unsignedTransaction: unsigned)
        try psbt.add(.init(type: 0x07, value: try Self.bytes(Self.p2pkScriptSig)), toInput: 0)
        let utxo = BitcoinTransaction.Output(amount: 600_000_000, scriptPubKey: try Self.bytes("00141d0f172a0ecb48aee1be1f2687d2963ae33f71a1"))
        try psbt.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(utxo)), toInput: 1)
        #expect(try BitcoinPSBT(base64: psbt.base64) == psbt)
        #expect(!psbt.isFinalized)
        #expect(throws: ChainError.incomplete(reason: "input 1 is not finalized")) { try psbt.extractTransaction() }

        let key = try Self.bytes(Self.publicKeyHex)
        // The BIP gives no previous transaction: refused by default (issue 32, finding 3), signed with the opt-out.
        await #expect(throws: ChainError.missingNonWitnessUTXO(input: 1)) {
            try await psbt.sign(publicKey: key, with: Self.signer(Self.privateKeyHex))
        }
        #expect(throws: ChainError.missingNonWitnessUTXO(input: 1)) { try psbt.signatureHash(input: 1) }
        #expect(try await psbt.sign(publicKey: key, policy: .allowingWitnessUTXOOnly, with: Self.signer(Self.privateKeyHex)) == [1])
        #expect(psbt.inputs[1].value(type: 0x02, keyData: key) == (try Self.bytes(Self.signatureHex + "01")))
        // Signing again adds nothing; another key's signer signs nothing here.
        #expect(try await psbt.sign(publicKey: key, policy: .allowingWitnessUTXOOnly, with: Self.signer(Self.privateKeyHex)) == [])
        #expect(try await psbt.sign(publicKey: try Self.publicKey(String(repeating: "11", count: 32)),
                                    with: Self.signer(String(repeating: "11", count: 32))) == [])
        #expect(try BitcoinPSBT(serialized: psbt.serialized) == psbt)

        #expect(try psbt.finalize() == [1])
        #expect(psbt.isFinalized)
        #expect(psbt.inputs[1].records.map(\.type) == [0x01, 0x08])
        #expect(try psbt.extractTransaction().serialized == (try Self.bytes(Self.signedHex)))
        #expect(try psbt.finalize() == [])
    }

    @Test func bip174InvalidVectorsAreRefused() throws {
        // The reason for each, in the BIP's order.
        let reasons = [
            "PSBT: no psbt magic", "output 0 map: key: truncated", "PSBT: the unsigned transaction has a scriptSig",
            "PSBT: no unsigned transaction", "input 0 map: duplicate key", "global unsigned transaction: unexpected key data",
            "input 0 witness UTXO: unexpected key data", "input 0 partial signature: invalid public key",
            "input 0 type 4: unexpected key data", "input 0 type 5: unexpected key data",
            "input 0 BIP 32 derivation: invalid public key", "input 0 non-witness UTXO: unexpected key data",
            "input 0 type 7: unexpected key data", "input 1 final scriptWitness: unexpected key data",
            "output 0 BIP 32 derivation: invalid public key", "input 0 sighash type: unexpected key data",
            "output 0 type 0: unexpected key data", "output 1 type 1: unexpected key data",
            "PSBT: the unsigned transaction is in witness serialization",
            "PSBT: the unsigned transaction is in witness serialization",  // 0x00 0x01 after its version, too
        ]
        #expect(reasons.count == BIP174Vectors.invalid.count)
        for (vector, reason) in zip(BIP174Vectors.invalid, reasons) {
            let bytes = try Self.bytes(vector.hex)
            #expect(throws: ChainError.invalidEncoding(reason: reason), "\(vector.name)") { try BitcoinPSBT(serialized: bytes) }
            #expect(throws: ChainError.invalidEncoding(reason: reason), "\(vector.name)") {
                try BitcoinPSBT(base64: bytes.base64EncodedString())
            }
        }
    }

    @Test func bip174ValidVectorsRoundTrip() throws {
        for vector in BIP174Vectors.valid + BIP174Vectors.signer + [("finalized", BIP174Vectors.finalized),
                                                                     ("unknown A", BIP174Vectors.unknownA),
                                                                     ("unknown B", BIP174Vectors.unknownB)] {
            let bytes = try Self.bytes(vector.1)
            let psbt = try BitcoinPSBT(serialized: bytes)
            #expect(psbt.serialized == bytes, "\(vector.0)")
            #expect(try BitcoinPSBT(base64: bytes.base64EncodedString()) == psbt, "\(vector.0)")
            #expect(psbt.inputs.count == psbt.unsignedTransaction.inputs.count)
            #expect(psbt.outputs.count == psbt.unsignedTransaction.outputs.count)
        }
        // Unknown types (0xF0) stay in every map.
        let unknown = try BitcoinPSBT(serialized: try Self.bytes(BIP174Vectors.unknownA))
        #expect(unknown.global.records.map(\.type) == [0x00, 0xF0])
        #expect(unknown.inputs[0].records.map(\.type) == [0xF0] && unknown.outputs[0].records.map(\.type) == [0xF0])
    }

    /// The workflow's finalized PSBT (P2SH multisig and P2SH-P2WSH, finalized by others) extracts to the
    /// BIP's transaction; our finalizer leaves those inputs alone.
    @Test func bip174ExtractorVector() throws {
        var psbt = try BitcoinPSBT(serialized: try Self.bytes(BIP174Vectors.finalized))
        #expect(psbt.isFinalized)
        #expect(try psbt.finalize() == [])
        let transaction = try psbt.extractTransaction()
        #expect(transaction.serialized == (try Self.bytes(BIP174Vectors.extracted)))
        #expect(try BitcoinTransaction(serialized: transaction.serialized) == transaction)
    }

    /// The signer-check vectors are not P2WPKH: nothing to sign, and no hash for them.
    @Test func bip174SignerCheckVectorsAreNotSigned() async throws {
        for vector in BIP174Vectors.signer {
            var psbt = try BitcoinPSBT(serialized: try Self.bytes(vector.hex))
            for index in psbt.inputs.indices {
                #expect(throws: ChainError.self, "\(vector.name)") { try psbt.signatureHash(input: index) }
            }
            #expect(try await psbt.sign(publicKey: try Self.publicKey(Self.privateKeyHex), with: Self.signer(Self.privateKeyHex)) == [])
        }
    }

    /// A PSBT with one P2WPKH input of the BIP-143 key, with its previous transaction and witness UTXO (for
    /// the rejection tests).
    static func oneInputPSBT(amount: UInt64 = 50_000) throws -> BitcoinPSBT {
        let keyHash = try BitcoinAddress.keyHash(publicKey: try Self.bytes(Self.publicKeyHex))
        let spent = BitcoinTransaction.Output(amount: amount, scriptPubKey: try BitcoinScript.p2wpkh(keyHash: keyHash))
        let previous = BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: Data(repeating: 7, count: 32), index: 0))],
                                          outputs: [.init(amount: 1, scriptPubKey: Data([0x6A])), spent])
        let outpoint = try BitcoinTransaction.OutPoint(txid: previous.txid, index: 1)
        let transaction = BitcoinTransaction(inputs: [.init(outpoint: outpoint, sequence: 0xFFFF_FFFD)],
                                             outputs: [.init(amount: amount - 1_000, scriptPubKey: try Self.bytes("0014" + String(repeating: "ab", count: 20)))])
        var psbt = try BitcoinPSBT(unsignedTransaction: transaction)
        try psbt.add(.init(type: 0x00, value: previous.serialized), toInput: 0)
        try psbt.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(spent)), toInput: 0)
        return psbt
    }

    @Test func signingRefusals() async throws {
        let key = try Self.bytes(Self.publicKeyHex)
        // A closure that signs with another key: signatureMismatch, PSBT unchanged.
        var psbt = try Self.oneInputPSBT()
        let before = psbt
        await #expect(throws: ChainError.signatureMismatch) {
            try await psbt.sign(publicKey: key, with: Self.signer(String(repeating: "22", count: 32)))
        }
        #expect(psbt == before)
        // A sighash type other than SIGHASH_ALL: the signer fails.
        var single = try Self.oneInputPSBT()
        try single.add(.init(type: 0x03, value: Data([3, 0, 0, 0])), toInput: 0)
        await #expect(throws: ChainError.unsupported(reason: "sighash type 3 (only SIGHASH_ALL)")) {
            try await single.sign(publicKey: key, with: Self.signer(Self.privateKeyHex))
        }
        // A high S from the closure is normalized to n − S and still verifies.
        var high = try Self.oneInputPSBT()
        let highSigner: @Sendable (Data) async throws -> Signature = { hash in
            let low = try await Self.signer(Self.privateKeyHex)(hash)
            let s = try Secp256k1.Scalar(bytes: [UInt8](low.s ?? Data()))
            return try Signature(r: low.r ?? Data(), s: Data((-s).bytes), recoveryId: 0)
        }
        #expect(try await high.sign(publicKey: key, with: highSigner) == [0])
        var low = try Self.oneInputPSBT()
        try await low.sign(publicKey: key, with: Self.signer(Self.privateKeyHex))
        #expect(high == low)
        // A partial signature that does not verify is refused by the finalizer.
        var forged = try Self.oneInputPSBT()
        let otherHash = Data(repeating: 9, count: 32)
        let wrong = try BitcoinSignature(try await Self.signer(Self.privateKeyHex)(otherHash))
        try forged.add(.init(type: 0x02, keyData: key, value: wrong.scriptEncoding), toInput: 0)
        #expect(throws: ChainError.signatureMismatch) { try forged.finalize() }
        // A witness UTXO that disagrees with the non-witness UTXO (BIP-143's amount attack).
        var previous = BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: Data(count: 32), index: 0))],
                                          outputs: [.init(amount: 1, scriptPubKey: Data([0x6A])), .init(amount: 60_000, scriptPubKey: Data([0x6A]))])
        previous.version = 1
        var mixed = try BitcoinPSBT(unsignedTransaction: BitcoinTransaction(
            inputs: [.init(outpoint: try .init(txid: previous.txid, index: 1))], outputs: []))
        try mixed.add(.init(type: 0x00, value: previous.serialized), toInput: 0)
        try mixed.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(.init(amount: 50_000, scriptPubKey: Data([0x6A])))), toInput: 0)
        #expect(throws: ChainError.invalidEncoding(reason: "input 0: witness UTXO differs from the non-witness UTXO's output")) {
            try mixed.spentOutput(input: 0)
        }
        // A non-witness UTXO that is not the spent transaction.
        var unrelated = try BitcoinPSBT(unsignedTransaction: BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: Data(count: 32), index: 0))], outputs: []))
        #expect(throws: ChainError.invalidEncoding(reason: "input 0: non-witness UTXO is not the spent transaction")) {
            try unrelated.add(.init(type: 0x00, value: previous.serialized), toInput: 0)
        }
    }

    @Test func strictParsingRejections() throws {
        let psbt = try Self.oneInputPSBT()
        var bytes = [UInt8](psbt.serialized)
        // Non-minimal CompactSize (the unsigned transaction's value length as 0xFD 0x.. 0x00).
        var nonMinimal = bytes
        let length = nonMinimal[7]
        nonMinimal.replaceSubrange(7...7, with: [0xFD, length, 0])
        #expect(throws: ChainError.invalidEncoding(reason: "global map: value: non-minimal CompactSize")) {
            try BitcoinPSBT(serialized: Data(nonMinimal))
        }
        // Trailing bytes, a missing map, a bad magic.
        #expect(throws: ChainError.invalidEncoding(reason: "PSBT: trailing bytes")) { try BitcoinPSBT(serialized: Data(bytes + [0])) }
        #expect(throws: ChainError.invalidEncoding(reason: "output 0 map: key: truncated")) { try BitcoinPSBT(serialized: Data(bytes.dropLast())) }
        #expect(throws: ChainError.invalidEncoding(reason: "PSBT: no psbt magic")) { try BitcoinPSBT(serialized: Data([0x70, 0x73, 0x62, 0x74, 0x00])) }
        // Duplicate keys.
        var duplicate = psbt
        #expect(throws: ChainError.invalidEncoding(reason: "input 0 map: duplicate key")) {
            try duplicate.add(.init(type: 0x01, value: psbt.inputs[0].records[0].value), toInput: 0)
        }
        // PSBT version 2 and its fields.
        bytes.insert(contentsOf: [0x01, 0xFB, 0x04, 0x02, 0x00, 0x00, 0x00], at: 5)
        #expect(throws: ChainError.unsupported(reason: "PSBT version other than 0")) { try BitcoinPSBT(serialized: Data(bytes)) }
        var v2Field = psbt
        #expect(throws: ChainError.invalidEncoding(reason: "input 0: type 14 is for PSBT version 2 only")) {
            try v2Field.add(.init(type: 0x0E, value: Data(count: 32)), toInput: 0)
        }
        // Base64 that is not canonical.
        let text = psbt.base64
        for bad in [text + "\n", " " + text, String(text.dropLast()), text.replacingOccurrences(of: "/", with: "_")] where bad != text {
            #expect(throws: ChainError.invalidEncoding(reason: "PSBT: not canonical Base64")) { try BitcoinPSBT(base64: bad) }
        }
        // A witness UTXO with trailing bytes, an amount above 21 million BTC.
        var trailing = psbt
        #expect(throws: ChainError.self) { try trailing.add(.init(type: 0x01, keyData: Data([1]), value: Data()), toInput: 0) }
        #expect(throws: ChainError.invalidEncoding(reason: "input 0 witness UTXO: amount above 21 million BTC")) {
            var copy = try BitcoinPSBT(unsignedTransaction: psbt.unsignedTransaction)
            try copy.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(.init(amount: UInt64.max, scriptPubKey: Data()))), toInput: 0)
        }
        #expect(throws: ChainError.unsupported(reason: "input 0 is not P2WPKH")) {
            var copy = try BitcoinPSBT(unsignedTransaction: psbt.unsignedTransaction)
            try copy.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(.init(amount: 5, scriptPubKey: Data([0x51])))), toInput: 0)
            _ = try copy.signatureHash(input: 0)
        }
    }

    @Test func transactionRejections() throws {
        let signed = [UInt8](try Self.bytes(Self.signedHex))
        // Witness marker with every witness empty (Bitcoin Core: "Superfluous witness record").
        var empty = try BitcoinTransaction(serialized: Data(signed))
        empty.inputs[1].witness = []
        var superfluous = Array(empty.legacySerialized)
        superfluous.insert(contentsOf: [0, 1], at: 4)
        superfluous.insert(contentsOf: [0, 0], at: superfluous.count - 4)
        #expect(throws: ChainError.invalidEncoding(reason: "transaction: witness marker without any witness")) {
            try BitcoinTransaction(serialized: Data(superfluous))
        }
        #expect(throws: ChainError.invalidEncoding(reason: "transaction: trailing bytes")) { try BitcoinTransaction(serialized: Data(signed + [0])) }
        #expect(throws: ChainError.invalidEncoding(reason: "transaction: unknown witness flag")) {
            try BitcoinTransaction(serialized: Data(signed[0..<5] + [2] + signed[6...]))
        }
        #expect(throws: ChainError.self) { try BitcoinTransaction(legacySerialized: Data(signed)) }
        // A count larger than the data can hold is refused before anything is allocated.
        #expect(throws: ChainError.invalidEncoding(reason: "input count: count exceeds the data")) {
            try BitcoinTransaction(serialized: Data([1, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F]))
        }
        let maxMoney = BitcoinTransaction(inputs: [], outputs: [.init(amount: BitcoinTransaction.maximumAmount + 1, scriptPubKey: Data())])
        #expect(throws: ChainError.invalidEncoding(reason: "output amount above 21 million BTC")) {
            try BitcoinTransaction(legacySerialized: maxMoney.serialized)
        }
        // No inputs, no outputs: legacy, read the same both ways.
        let bare = BitcoinTransaction(version: 2, inputs: [], outputs: [], lockTime: 5)
        #expect(try BitcoinTransaction(serialized: bare.serialized) == bare)
    }

    /// CompactSize lengths at each form's bounds round-trip; a longer form than needed is refused.
    @Test func compactSizeBoundaries() throws {
        let outpoint = try BitcoinTransaction.OutPoint(txid: Data(repeating: 1, count: 32), index: 0)
        for length in [0, 0xFC, 0xFD, 0xFFFF, 0x1_0000] {
            let transaction = BitcoinTransaction(inputs: [.init(outpoint: outpoint, witness: [Data(count: length)])],
                                                 outputs: [.init(amount: 1, scriptPubKey: Data(repeating: 0x51, count: length))])
            #expect(try BitcoinTransaction(serialized: transaction.serialized) == transaction, "\(length)")
        }
        // scriptPubKey length 1 written as 0xFD 0x01 0x00.
        let one = BitcoinTransaction(inputs: [.init(outpoint: outpoint)], outputs: [.init(amount: 1, scriptPubKey: Data([0x51]))])
        var bytes = [UInt8](one.serialized)
        let at = bytes.count - 4 - 2
        #expect(bytes[at] == 1 && bytes[at + 1] == 0x51)
        bytes.replaceSubrange(at...at, with: [0xFD, 0x01, 0x00])
        #expect(throws: ChainError.invalidEncoding(reason: "scriptPubKey: non-minimal CompactSize")) {
            try BitcoinTransaction(serialized: Data(bytes))
        }
    }

    @Test func strictDERSignatures() throws {
        let good = try Self.bytes(Self.signatureHex + "01")
        let signature = try BitcoinSignature(scriptEncoding: good)
        #expect(signature.scriptEncoding == good && signature.sighashType == 1)
        var bytes = [UInt8](good)
        // High S (n − s): refused.
        let s = try Secp256k1.Scalar(bytes: [UInt8](signature.s))
        let highS = Data((-s).bytes)
        var highEncoding = [UInt8](good.prefix(4 + 32)) + [0x02, 0x21, 0x00] + [UInt8](highS) + [0x01]
        highEncoding[1] = UInt8(highEncoding.count - 3)
        #expect(throws: ChainError.invalidSignature(reason: "r or s out of range, or high S")) {
            try BitcoinSignature(scriptEncoding: Data(highEncoding))
        }
        // Wrong total length, padding, truncation.
        bytes[1] += 1
        #expect(throws: ChainError.invalidSignature(reason: "not strict DER")) { try BitcoinSignature(scriptEncoding: Data(bytes)) }
        #expect(throws: ChainError.invalidSignature(reason: "not strict DER")) { try BitcoinSignature(scriptEncoding: good.dropLast(2)) }
        let padded = [0x30, 0x45, 0x02, 0x21, 0x00] + [UInt8](good[4..<(good.count)])
        #expect(throws: ChainError.invalidSignature(reason: "not strict DER")) { try BitcoinSignature(scriptEncoding: Data(padded)) }
    }
}
