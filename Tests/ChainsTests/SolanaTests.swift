import Foundation
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardChains
import SilentShardCore
import Testing

/// Solana: base58 addresses, legacy and v0 messages (strict parsing), signing the message bytes with a
/// threshold EdDSA key (FROST, in process) and the wire transaction. `interop/test_chains.py` builds
/// messages with solders and checks the signed transactions with solders and `cryptography`.
@Suite("Solana: addresses, messages, signed transactions")
struct SolanaTests {
    static func message(version0: Bool, payer: Data, recipient: Data) -> Data {
        var bytes: [UInt8] = version0 ? [0x80] : []
        bytes += [1, 0, 1, 3] + [UInt8](payer) + [UInt8](recipient) + [UInt8](repeating: 0, count: 32)
        bytes += [UInt8](repeating: 0xAB, count: 32)                          // recent blockhash
        bytes += [1, 2, 2, 0, 1, 12, 2, 0, 0, 0] + [0x40, 0x42, 0x0F, 0, 0, 0, 0, 0]   // system transfer of 1,000,000 lamports
        if version0 { bytes += [0] }                                           // no address table lookups
        return Data(bytes)
    }

    @Test func addresses() throws {
        #expect(try SolanaAddress("11111111111111111111111111111111").bytes == Data(count: 32))
        let key = Data((0..<32).map { UInt8($0) })
        let address = try SolanaAddress(publicKey: key)
        #expect(try SolanaAddress(address.base58) == address)
        for bad in ["", "0OIl", "1111111111111111111111111111111", "111111111111111111111111111111111", String(repeating: "z", count: 44)] {
            #expect(throws: ChainError.self, "\(bad)") { try SolanaAddress(bad) }
        }
        #expect(throws: ChainError.invalidPublicKey) { try SolanaAddress(publicKey: Data(count: 33)) }
    }

    @Test(arguments: [false, true])
    func aThresholdKeySignsAMessage(version0: Bool) async throws {
        var rng = DeterministicRandom(seed: 101)
        let shares = try FROST.LocalRun.keygen(threshold: 2, parties: 2, using: &rng)
        let keyshare = Keyshare(frost: shares[0], mode: .duo)
        let path = "m/44/501/0/0"
        let child = try keyshare.childPublicKey(path: path)
        let serialized = Self.message(version0: version0, payer: child, recipient: Data(repeating: 7, count: 32))
        let message = try SolanaMessage(serialized: serialized)
        let payer = try SolanaAddress(publicKey: child)
        #expect(message.version == (version0 ? .v0 : .legacy) && message.signers == [payer])
        var transaction = SolanaTransaction(message: message)
        #expect(!transaction.isFullySigned)
        let indices = try FROST.Derivation.parse(path)
        try await transaction.sign(publicKey: child) { bytes in
            var rng = SystemRandomNumberGenerator()
            return try Signature(eddsa: Data(try FROST.LocalRun.sign(shares, signers: [0, 1], message: [UInt8](bytes), path: indices,
                                                                     using: &rng)))
        }
        #expect(transaction.isFullySigned)
        let wire = transaction.serialized
        #expect(wire.count == 1 + 64 + serialized.count)
        #expect(try SolanaTransaction(serialized: wire) == transaction)
        // A closure signing under another path is caught.
        var other = SolanaTransaction(message: message)
        await #expect(throws: ChainError.signatureMismatch) {
            try await other.sign(publicKey: child) { bytes in
                var rng = SystemRandomNumberGenerator()
                return try Signature(eddsa: Data(try FROST.LocalRun.sign(shares, signers: [0, 1], message: [UInt8](bytes), using: &rng)))
            }
        }
    }

    @Test func malformedMessagesAndTransactionsAreTypedErrors() throws {
        let good = [UInt8](Self.message(version0: true, payer: Data(repeating: 1, count: 32), recipient: Data(repeating: 2, count: 32)))
        for length in 0..<good.count {
            #expect(throws: ChainError.self) { try SolanaMessage(serialized: Data(good.prefix(length))) }
        }
        #expect(throws: ChainError.self) { try SolanaMessage(serialized: Data(good + [0])) }
        var version1 = good
        version1[0] = 0x81
        #expect(throws: ChainError.self) { try SolanaMessage(serialized: Data(version1)) }
        var noSigner = good
        noSigner[1] = 0
        #expect(throws: ChainError.self) { try SolanaMessage(serialized: Data(noSigner)) }
        var badProgram = good
        badProgram[1 + 3 + 1 + 96 + 32 + 1] = 9                                // program index past the accounts
        #expect(throws: ChainError.self) { try SolanaMessage(serialized: Data(badProgram)) }
        // Wire form: the signature count must match the header; a non-canonical compact-u16 is refused.
        let wire = [1] + [UInt8](repeating: 0, count: 64) + good
        #expect(try SolanaTransaction(serialized: Data(wire)).signatures.count == 1)
        #expect(throws: ChainError.self) { try SolanaTransaction(serialized: Data([2] + [UInt8](repeating: 0, count: 128) + good)) }
        #expect(throws: ChainError.self) { try SolanaTransaction(serialized: Data([0x81, 0x00] + [UInt8](repeating: 0, count: 64) + good)) }
    }
}
