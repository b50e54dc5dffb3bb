import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// The Solana entry of `silentshard demo --chains`: the EdDSA key's address and a legacy transfer-like
/// message (fee payer = the key, a random recent blockhash, one System Program transfer of a random amount
/// to a random account), signed through `SolanaTransaction.sign`, checked with Ed25519 before it is written.
enum ChainsDemoSolana {
    /// The entry for `keyshare` (an EdDSA key of `party`), signing with the root key.
    static func entry(party: ChainsDemo.Party, keyshare: Keyshare) async throws -> JSONValue {
        let publicKey = keyshare.publicKey
        let address = try SolanaAddress(publicKey: publicKey)
        let lamports = ChainsDemo.random(in: 1...10_000_000_000)
        let message = try SolanaMessage(serialized: transferMessage(from: publicKey, to: ChainsDemo.random(32),
                                                                    blockhash: ChainsDemo.random(32), lamports: lamports))
        var transaction = SolanaTransaction(message: message)
        try await transaction.sign(publicKey: publicKey) { try await party.sign(keyshare, $0, "m") }

        let what = "solana \(party.mode)"
        let wire = transaction.serialized
        let parsed = try SolanaTransaction(serialized: wire)
        try ChainsDemo.check(parsed == transaction && parsed.isFullySigned, "\(what): wire transaction")
        let signature = try Signature(eddsa: parsed.signatures.first ?? Data())
        let key = try Ed25519.VerifyingKey(bytes: [UInt8](publicKey))
        try ChainsDemo.check(key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message.serialized)),
                             "\(what): Ed25519 signature over the message")

        return .object([
            "chain": .string("solana"), "mode": .string(party.mode), "publicKey": .string(Hex.encode([UInt8](publicKey))),
            "address": .string(address.base58), "lamports": .integer(String(lamports)),
            "message": .string(message.serialized.base64EncodedString()), "transaction": .string(wire.base64EncodedString()),
        ])
    }

    /// A legacy message: header (1 signer, 0 read-only signed, 1 read-only unsigned), accounts [payer,
    /// recipient, System Program], the blockhash, and one instruction: System Program `Transfer` (index 2,
    /// u32 LE) of `lamports` (u64 LE) from account 0 to account 1. Counts are below 128, one compact-u16 byte each.
    static func transferMessage(from payer: Data, to recipient: Data, blockhash: Data, lamports: UInt64) -> Data {
        let systemProgram = Data(repeating: 0, count: 32)
        var data = Data([2, 0, 0, 0])
        withUnsafeBytes(of: lamports.littleEndian) { data.append(contentsOf: $0) }
        var bytes = Data([1, 0, 1, 3]) + payer + recipient + systemProgram + blockhash
        bytes += Data([1, 2, 2, 0, 1, UInt8(data.count)]) + data
        return bytes
    }
}
