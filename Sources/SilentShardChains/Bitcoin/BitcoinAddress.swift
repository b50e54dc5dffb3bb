import Foundation
import MPCCrypto

/// Bitcoin networks, by their address prefixes.
public enum BitcoinNetwork: String, Sendable, CaseIterable {
    case mainnet, testnet, regtest

    /// BIP-173 human-readable part.
    var bech32Prefix: String {
        switch self {
        case .mainnet: "bc"
        case .testnet: "tb"
        case .regtest: "bcrt"
        }
    }

    /// The P2PKH version byte.
    var pubkeyHashVersion: UInt8 { self == .mainnet ? 0x00 : 0x6F }
}

/// Bitcoin addresses of a secp256k1 public key (compressed, as segwit requires): P2WPKH (BIP-141
/// version-0 witness program, bech32 per BIP-173) and legacy P2PKH (Base58Check). Taproot (P2TR, BIP-341)
/// comes with a later issue.
public enum BitcoinAddress {
    /// HASH160 = RIPEMD-160(SHA-256(compressed key)), the 20-byte key hash both address kinds carry.
    public static func keyHash(publicKey: Data) throws(ChainError) -> Data {
        guard let point = try? Secp256k1.Point(bytes: [UInt8](publicKey)), let compressed = try? point.compressed() else {
            throw .invalidPublicKey
        }
        return Data(RIPEMD160.hash(SHA256.hash(compressed)))
    }

    /// The P2WPKH address (`bc1q…`, `tb1q…`, `bcrt1q…`).
    public static func p2wpkh(publicKey: Data, network: BitcoinNetwork) throws(ChainError) -> String {
        Bech32.segwitAddress(hrp: network.bech32Prefix, version: 0, program: [UInt8](try keyHash(publicKey: publicKey)))
    }

    /// The legacy P2PKH address (`1…`; `m…`/`n…` on testnet and regtest).
    public static func p2pkh(publicKey: Data, network: BitcoinNetwork) throws(ChainError) -> String {
        Base58Check.encode([network.pubkeyHashVersion] + [UInt8](try keyHash(publicKey: publicKey)))
    }
}
