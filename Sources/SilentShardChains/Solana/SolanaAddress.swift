import Foundation
import MPCCrypto

/// A Solana account address: 32 bytes (for a signer, its Ed25519 public key), written in base58
/// (<https://solana.com/docs/core/accounts>).
public struct SolanaAddress: Sendable, Hashable, CustomStringConvertible {
    /// The 32 address bytes.
    public let bytes: Data

    /// The address of an Ed25519 public key (32 bytes, e.g. an EdDSA `Keyshare`'s `publicKey` or a soft
    /// child's `childPublicKey(path:)`).
    public init(publicKey: Data) throws(ChainError) {
        guard publicKey.count == 32 else { throw .invalidPublicKey }
        bytes = publicKey
    }

    /// Parses base58 text of exactly 32 bytes (canonical: re-encoding gives the same text).
    public init(_ text: String) throws(ChainError) {
        guard let decoded = Base58.decode(text, maximumLength: 44), decoded.count == 32, Base58.encode(decoded) == text else {
            throw .invalidAddress(reason: "not base58 of 32 bytes")
        }
        bytes = Data(decoded)
    }

    init(uncheckedBytes bytes: Data) { self.bytes = bytes }

    /// The base58 form.
    public var base58: String { Base58.encode([UInt8](bytes)) }

    public var description: String { base58 }
}
