import Foundation
import MPCCrypto
import SilentShardChains
import SilentShardCore

/// `silentshard demo --chains --json FILE`: Ethereum, Bitcoin (regtest) and Solana artifacts signed by
/// threshold keys of the demo's own embedded nodes (duo and trio), each checked with the chains module
/// before FILE is written. Every message, amount and recipient is fresh random data.
enum ChainsDemo {
    /// How one mode (duo or trio) makes keys and signs: the SDK session's `keygen()` and
    /// `signature(keyshare:message:chainPath:)`.
    struct Party {
        /// "duo" or "trio".
        let mode: String
        /// A fresh key of the algorithm.
        let keygen: (Keyshare.Algorithm) async throws -> Keyshare
        /// The signature of `message` (a 32-byte hash for ECDSA, the message for EdDSA) under the soft `path`.
        let sign: (_ keyshare: Keyshare, _ message: Data, _ path: String) async throws -> Signature
    }

    /// An artifact that did not pass its check.
    struct Failure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The Ethereum paths signed under (BIP-44 account 0's first address, and the root key).
    static let ethereumPaths = ["m/44/60/0/0/0", "m"]
    /// The Bitcoin path (BIP-84 regtest/testnet coin 1, soft as the SDK derives).
    static let bitcoinPath = "m/84/1/0/0/0"

    /// One ECDSA and one EdDSA keygen for `party`, then every chain's entries (already verified).
    static func entries(_ party: Party) async throws -> [JSONValue] {
        let ecdsa = try await party.keygen(.ecdsa)
        var entries: [JSONValue] = []
        for path in ethereumPaths {
            entries.append(try await ChainsDemoEthereum.entry(party: party, keyshare: ecdsa, path: path))
        }
        entries.append(try await ChainsDemoBitcoin.entry(party: party, keyshare: ecdsa, path: bitcoinPath))
        let eddsa = try await party.keygen(.eddsa)
        entries.append(try await ChainsDemoSolana.entry(party: party, keyshare: eddsa))
        return entries
    }

    /// Writes `{"chains": [...]}` to `path`.
    static func write(_ entries: [JSONValue], to path: String) throws {
        let text = JSONValue.object(["chains": .array(entries)]).serialized + "\n"
        try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
    }

    /// `condition`, or a `Failure` naming what did not verify.
    static func check(_ condition: Bool, _ what: @autoclosure () -> String) throws {
        guard condition else { throw Failure("chains demo: \(what()) did not verify") }
    }

    /// `0x` + lowercase hex.
    static func hex0x(_ bytes: Data) -> String { "0x" + Hex.encode([UInt8](bytes)) }

    /// `count` random bytes.
    static func random(_ count: Int) -> Data { Data(SecureRandom.bytes(count: count)) }

    /// A random integer in `range`.
    static func random(in range: ClosedRange<UInt64>) -> UInt64 {
        var rng = SecureRandom()
        return UInt64.random(in: range, using: &rng)
    }

    /// A random lowercase word of `count` letters.
    static func word(_ count: Int) -> String {
        var rng = SecureRandom()
        return String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyz".randomElement(using: &rng) ?? "a" })
    }
}
