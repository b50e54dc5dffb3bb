import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore
import Testing

/// Issue 32, finding 3: BIP-143's two-session fee attack (CVE-2020-14199). A segwit v0 signature commits to
/// the amount of its own input only, so two PSBTs of one transaction that each lie about the *other* input's
/// amount both show a small fee; one good signature from each, combined, gives a transaction paying the
/// true, huge fee. The signer refuses a segwit v0 input without its previous transaction
/// (`PSBT_IN_NON_WITNESS_UTXO`) unless the app opts out.
@Suite("Bitcoin PSBT: the BIP-143 fee attack (issue 32, finding 3)")
struct BitcoinPSBTFeeAttackTests {
    static let privateKeyHex = "619c335025c7f4012e556c2a58b2506e30b8511b53ade95ea316fd8c3286feb9"
    static let bitcoin: UInt64 = 100_000_000

    static func signer() -> @Sendable (Data) async throws -> Signature {
        { hash in Signature(ecdsa: try Secp256k1.ECDSA.sign(hash: [UInt8](hash), privateKey: try Secp256k1.Scalar(bytes: try Hex.decode(privateKeyHex)))) }
    }

    static func publicKey() throws -> Data {
        Data(try Secp256k1.Point(base: try Secp256k1.Scalar(bytes: try Hex.decode(privateKeyHex))).compressed())
    }

    /// The victim's two UTXOs (15 BTC and 20 BTC, both P2WPKH of the key, in real previous transactions) and a
    /// transaction spending both to the attacker's 20 BTC output: a true fee of 15 BTC.
    struct Setup {
        let key: Data
        let previous: [BitcoinTransaction]
        let spent: [BitcoinTransaction.Output]
        let unsigned: BitcoinTransaction

        init() throws {
            key = try BitcoinPSBTFeeAttackTests.publicKey()
            let ours = try BitcoinScript.p2wpkh(keyHash: BitcoinAddress.keyHash(publicKey: key))
            spent = [.init(amount: 15 * BitcoinPSBTFeeAttackTests.bitcoin, scriptPubKey: ours), .init(amount: 20 * BitcoinPSBTFeeAttackTests.bitcoin, scriptPubKey: ours)]
            let funding = try BitcoinTransaction.OutPoint(txid: Data(repeating: 0x5A, count: 32), index: 0)
            let first = BitcoinTransaction(inputs: [.init(outpoint: funding)], outputs: [spent[0]])
            let second = BitcoinTransaction(inputs: [.init(outpoint: funding)],
                                            outputs: [.init(amount: 1_000, scriptPubKey: Data([0x6A])), spent[1]])
            previous = [first, second]
            let attacker = try BitcoinScript.p2wpkh(keyHash: Data(repeating: 0xAA, count: 20))
            unsigned = BitcoinTransaction(inputs: [.init(outpoint: try .init(txid: first.txid, index: 0), sequence: 0xFFFF_FFFD),
                                                   .init(outpoint: try .init(txid: second.txid, index: 1), sequence: 0xFFFF_FFFD)],
                                          outputs: [.init(amount: 20 * BitcoinPSBTFeeAttackTests.bitcoin, scriptPubKey: attacker)])
        }

        /// A PSBT of the transaction whose witness UTXOs claim `amounts` (no previous transactions).
        func psbt(claiming amounts: [UInt64]) throws -> BitcoinPSBT {
            var psbt = try BitcoinPSBT(unsignedTransaction: unsigned)
            for (index, amount) in amounts.enumerated() {
                let output = BitcoinTransaction.Output(amount: amount, scriptPubKey: spent[index].scriptPubKey)
                try psbt.add(.init(type: 0x01, value: BitcoinPSBT.witnessUTXOValue(output)), toInput: index)
            }
            return psbt
        }

        /// The fee a wallet shows for `psbt`: what its UTXOs claim minus the outputs.
        func shownFee(_ psbt: BitcoinPSBT) throws -> UInt64 {
            let inputs = try psbt.inputs.indices.reduce(UInt64(0)) { $0 + (try psbt.spentOutput(input: $1)?.amount ?? 0) }
            return inputs - unsigned.outputs.reduce(0) { $0 + $1.amount }
        }
    }

    /// The attack end to end: refused at signing by default (`missingNonWitnessUTXO`), and by the previous
    /// transactions' check when they are present; with the documented opt-out it goes through as before
    /// (both signatures valid for the true amounts, 15 BTC of fee), which is what the default prevents.
    @Test func finding3_twoLyingPSBTsAreRefusedAtSigning() async throws {
        let setup = try Setup()
        // Each PSBT lies about the input it does not want signed honestly; each shows a 10 000 sat fee.
        let first = try setup.psbt(claiming: [15 * Self.bitcoin, 5 * Self.bitcoin + 10_000])
        let second = try setup.psbt(claiming: [10_000, 20 * Self.bitcoin])
        #expect(try setup.shownFee(first) == 10_000 && setup.shownFee(second) == 10_000)

        // Refused by default: no previous transaction, so the amounts are unchecked. Nothing is signed (the
        // closure is never called) and the PSBTs are unchanged.
        for psbt in [first, second] {
            var attempt = psbt
            await #expect(throws: ChainError.missingNonWitnessUTXO(input: 0)) {
                try await attempt.sign(publicKey: setup.key) { _ in Issue.record("signed"); throw ChainError.signatureMismatch }
            }
            #expect(attempt == psbt)
            #expect(throws: ChainError.missingNonWitnessUTXO(input: 1)) { try attempt.signatureHash(input: 1) }
            // Found by a BIP-32 derivation record as well.
            let origin = BitcoinPSBT.KeyOrigin(publicKey: setup.key, fingerprint: Data([1, 2, 3, 4]), path: [0])
            try attempt.add(origin.record, toInput: 0)
            try attempt.add(origin.record, toInput: 1)
            let withOrigins = attempt
            await #expect(throws: ChainError.missingNonWitnessUTXO(input: 0)) {
                try await attempt.sign(masterFingerprint: Data([1, 2, 3, 4]), childPublicKey: { _ in setup.key }) { _, _ in
                    Issue.record("signed")
                    throw ChainError.signatureMismatch
                }
            }
            #expect(attempt == withOrigins)
        }

        // With the previous transactions in the PSBTs the lies are seen: each lying witness UTXO is refused.
        for (psbt, lyingInput) in [(first, 1), (second, 0)] {
            var complete = psbt
            for index in 0..<2 { try complete.add(.init(type: 0x00, value: setup.previous[index].serialized), toInput: index) }
            await #expect(throws: ChainError.invalidEncoding(reason: "input \(lyingInput): witness UTXO differs from the non-witness UTXO's output")) {
                try await complete.sign(publicKey: setup.key, with: Self.signer())
            }
        }

        // What the refusal prevents (the opt-out signs as before): the signer signs both, the attacker keeps input
        // 0's signature from the first and input 1's from the second, combines, finalizes and extracts.
        var signedFirst = first, signedSecond = second
        #expect(try await signedFirst.sign(publicKey: setup.key, policy: .allowingWitnessUTXOOnly, with: Self.signer()) == [0, 1])
        #expect(try await signedSecond.sign(publicKey: setup.key, policy: .allowingWitnessUTXOOnly, with: Self.signer()) == [0, 1])
        var combined = try setup.psbt(claiming: setup.spent.map(\.amount))
        for (index, source) in [(0, signedFirst), (1, signedSecond)] {
            let signature = try #require(source.inputs[index].value(type: 0x02, keyData: setup.key))
            try combined.add(.init(type: 0x02, keyData: setup.key, value: signature), toInput: index)
        }
        #expect(try combined.finalize() == [0, 1])
        let transaction = try combined.extractTransaction()
        // Both signatures are valid for the true amounts: the network accepts a transaction paying 15 BTC of fee.
        let scriptCode = try BitcoinScript.p2pkh(keyHash: BitcoinAddress.keyHash(publicKey: setup.key))
        for index in 0..<2 {
            let hash = try transaction.segwitSignatureHash(input: index, scriptCode: scriptCode, amount: setup.spent[index].amount)
            #expect(try BitcoinSignature(scriptEncoding: transaction.inputs[index].witness[0]).verifies(hash: hash, publicKey: setup.key))
            #expect(transaction.inputs[index].witness[1] == setup.key)
        }
        #expect(setup.spent.reduce(0) { $0 + $1.amount } - transaction.outputs.reduce(0) { $0 + $1.amount } == 15 * Self.bitcoin)
    }
}

extension BitcoinPSBTFeeAttackTests {
    /// The honest transaction with its previous transactions is signed by default, finalized and extracted;
    /// a non-witness UTXO alone (no witness UTXO) gives the amount too.
    @Test func finding3_inputsWithTheirPreviousTransactionsAreSigned() async throws {
        let setup = try Setup()
        var psbt = try setup.psbt(claiming: setup.spent.map(\.amount))
        for index in 0..<2 { try psbt.add(.init(type: 0x00, value: setup.previous[index].serialized), toInput: index) }
        #expect(try await psbt.sign(publicKey: setup.key, with: Self.signer()) == [0, 1])
        #expect(try psbt.finalize() == [0, 1])
        #expect(try psbt.extractTransaction().txid == setup.unsigned.txid)

        var onlyPrevious = try BitcoinPSBT(unsignedTransaction: setup.unsigned)
        for index in 0..<2 { try onlyPrevious.add(.init(type: 0x00, value: setup.previous[index].serialized), toInput: index) }
        #expect(try onlyPrevious.spentOutput(input: 1) == setup.spent[1])
        #expect(try await onlyPrevious.sign(publicKey: setup.key, with: Self.signer()) == [0, 1])
        #expect(try onlyPrevious.finalize() == [0, 1])
    }
}
