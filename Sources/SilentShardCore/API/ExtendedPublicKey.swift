import Foundation
import MPCCrypto
import MPCProtocols

/// The network a BIP32 extended public key is serialized for: its version bytes.
public enum BIP32Network: Sendable, Equatable {
    /// "xpub…" (version 0x0488B21E).
    case mainnet
    /// "tpub…" (version 0x043587CF).
    case testnet

    var version: UInt32 {
        switch self {
        case .mainnet: BIP32ExtendedPublicKey.mainnetVersion
        case .testnet: BIP32ExtendedPublicKey.testnetVersion
        }
    }
}

extension Keyshare {
    /// The BIP32 extended public key (Base58Check, 111 characters) of this ECDSA key at the soft `path`:
    /// "m" is the root (depth 0, the keyshare's public key and root chain code); a child carries its
    /// depth, its parent's fingerprint and its index, as BIP32 serializes it. A watch-only wallet given
    /// the root xpub derives the same child keys that `signature(keyshare:message:chainPath:)` signs
    /// under. Public data only: no node is contacted.
    ///
    /// Throws `invalidInput` for an EdDSA keyshare (BIP32-Ed25519 has no standard xpub) and for a path
    /// with a hardened index (hardened keys need the private key: `hardDerivation`).
    public func extendedPublicKey(network: BIP32Network = .mainnet, path: String = "m") throws(SilentShardError) -> String {
        guard algorithm == .ecdsa else { throw .invalidInput(reason: "extended public keys are for ECDSA keys") }
        do {
            let root = try BIP32ExtendedPublicKey(publicKey: try Secp256k1.Point(bytes: [UInt8](publicKey)),
                                                  chainCode: [UInt8](rootChainCode), version: network.version)
            return try root.derive(DerivationPath(path)).base58
        } catch {
            throw .invalidInput(reason: "invalid soft path")
        }
    }
}
