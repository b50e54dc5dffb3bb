import Foundation
import SilentShardCore

/// `personal_sign` messages (EIP-191 version 0x45, <https://eips.ethereum.org/EIPS/eip-191>): the hash of
/// `"\u{19}Ethereum Signed Message:\n" ‖ decimal byte length ‖ message`, so a signed message can never be
/// a valid transaction.
public enum EthereumPersonalMessage {
    /// The EIP-191 hash of `message` (its bytes as given; for text, its UTF-8).
    public static func hash(_ message: Data) -> Data {
        Keccak256.hash(Data("\u{19}Ethereum Signed Message:\n\(message.count)".utf8) + message)
    }

    /// Signs `message` through `sign` (the SDK's signature over a 32-byte hash, e.g.
    /// `{ try await session.signature(keyshare: key, message: $0, chainPath: path) }`) and checks the
    /// result recovers to `publicKey`'s address (`signatureMismatch` otherwise, e.g. a closure using
    /// another path). Returns the signature (`rsv` for `personal_sign`).
    public static func sign(_ message: Data, publicKey: Data,
                            with sign: (Data) async throws -> Signature) async throws -> EthereumSignature {
        let address = try EthereumAddress(publicKey: publicKey)
        let digest = hash(message)
        let signature = try EthereumSignature(try await sign(digest))
        guard try signature.recoverAddress(hash: digest) == address else { throw ChainError.signatureMismatch }
        return signature
    }

    /// The address that signed `message` with `personal_sign`.
    public static func signer(of message: Data, signature: EthereumSignature) throws(ChainError) -> EthereumAddress {
        try signature.recoverAddress(hash: hash(message))
    }
}
