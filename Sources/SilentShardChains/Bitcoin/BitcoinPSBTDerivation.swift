import Foundation
import MPCCrypto
import SilentShardCore

/// Finding the inputs to sign by their BIP-32 key origins: BIP-174's `PSBT_IN_BIP32_DERIVATION` (0x06) records
/// (<https://github.com/bitcoin/bips/blob/master/bip-0174.mediawiki#specification>: key = the public key, value =
/// the master key's fingerprint ‖ the path, each index u32 little-endian), as wallets write them for a key
/// they watch by its xpub (`Keyshare.extendedPublicKey`).
extension BitcoinPSBT {
    /// A public key of an input as a BIP-32 derivation record names it.
    public struct KeyOrigin: Sendable, Equatable {
        /// The public key the record is for (compressed or uncompressed SEC1, as written).
        public let publicKey: Data
        /// The first 4 bytes of HASH160 of the master public key.
        public let fingerprint: Data
        /// The path from the master key; indices ≥ 2^31 are hardened.
        public let path: [UInt32]

        public init(publicKey: Data, fingerprint: Data, path: [UInt32]) {
            self.publicKey = publicKey
            self.fingerprint = fingerprint
            self.path = path
        }

        /// The input record that names this origin: `PSBT_IN_BIP32_DERIVATION`, key = the public key, value =
        /// fingerprint ‖ each index u32 little-endian.
        public var record: Record {
            Record(type: InputType.bip32Derivation, keyData: publicKey,
                   value: fingerprint + path.flatMap { index in (0..<4).map { UInt8(truncatingIfNeeded: index >> (8 * UInt32($0))) } })
        }

        /// The path as the SDK writes it ("m/84/1/0/0/0"; hardened indices with "'").
        public var pathString: String {
            (["m"] + path.map { $0 >= 0x8000_0000 ? "\($0 - 0x8000_0000)'" : "\($0)" }).joined(separator: "/")
        }

        /// Whether every index is soft (the SDK derives soft children of a threshold key; a hardened path
        /// is another key, made by `hardDerivation`).
        public var isSoft: Bool { path.allSatisfy { $0 < 0x8000_0000 } }
    }

    /// The key origins input `index`'s BIP-32 derivation records name (none for an unknown input).
    public func keyOrigins(input index: Int) -> [KeyOrigin] {
        guard inputs.indices.contains(index) else { return [] }
        return inputs[index].records(type: InputType.bip32Derivation).compactMap { record in
            let value = [UInt8](record.value)
            guard value.count >= 4, value.count % 4 == 0 else { return nil }   // parsing already refused these
            let path = stride(from: 4, to: value.count, by: 4).map { offset in
                (0..<4).reduce(UInt32(0)) { $0 | UInt32(value[offset + $1]) << (8 * UInt32($1)) }
            }
            return KeyOrigin(publicKey: record.keyData, fingerprint: Data(value[0..<4]), path: path)
        }
    }

    /// The BIP-32 fingerprint of `publicKey`: the first 4 bytes of HASH160 of its compressed form (the
    /// `masterFingerprint` of a threshold key is that of `Keyshare.publicKey`).
    public static func fingerprint(of publicKey: Data) throws(ChainError) -> Data {
        Data(BitcoinEncoding.hash160([UInt8](try compressed(publicKey))).prefix(4))
    }

    /// Signs every input that is not finalized, spends a P2WPKH output, and names in a BIP-32 derivation
    /// record the master key `masterFingerprint` at a soft path whose child key — `childPublicKey(path)`,
    /// e.g. `SilentShard.ECDSA.deriveChildPublicKey(keyshare:path:)` — is both the record's key and the key
    /// the output pays to. A record whose key is not what the path derives to, a hardened path, or another
    /// fingerprint is not signed (the record may be wrong, or another wallet's). Each input's BIP-143 hash is
    /// signed by `sign(hash, path)` (the SDK's signature at that path) and added by `addSignature` (checked
    /// against the key first); an input without its previous transaction is `missingNonWitnessUTXO` unless
    /// `policy` allows it (see `SigningPolicy`). Returns the indices signed; on any error the PSBT is left
    /// unchanged.
    @discardableResult
    public mutating func sign(masterFingerprint: Data, childPublicKey: (String) throws -> Data,
                              policy: SigningPolicy = .requireNonWitnessUTXO,
                              with sign: (_ hash: Data, _ path: String) async throws -> Signature) async throws -> [Int] {
        guard masterFingerprint.count == 4 else { throw ChainError.invalidEncoding(reason: "a fingerprint is 4 bytes") }
        // Every input is found and checked (its hash made under `policy`) before the first is signed.
        var planned: [(index: Int, key: Data, path: String, hash: Data)] = []
        for index in inputs.indices where !isFinalized(input: index) {
            for origin in keyOrigins(input: index) where origin.fingerprint == masterFingerprint && origin.isSoft {
                let path = origin.pathString
                let derived = try Self.compressed(try childPublicKey(path))
                guard (try? Self.compressed(origin.publicKey)) == derived, try inputsToSign(publicKey: derived).contains(index),
                      !planned.contains(where: { $0.index == index && $0.key == derived })
                else { continue }
                planned.append((index, derived, path, try signatureHash(input: index, policy: policy)))
            }
        }
        var signed = self
        for item in planned {
            try signed.addSignature(try await sign(item.hash, item.path), publicKey: item.key, input: item.index)
        }
        self = signed
        return planned.map(\.index)
    }
}
