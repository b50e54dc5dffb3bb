import MPCCrypto

/// A BIP32 extended public key ("xpub"): version ‖ depth ‖ parent fingerprint ‖ child number ‖ chain
/// code ‖ key (78 bytes), shown in Base58Check. Everything in it is public.
public struct BIP32ExtendedPublicKey: Sendable, Equatable {
    /// Mainnet "xpub".
    public static let mainnetVersion: UInt32 = 0x0488_B21E
    /// Testnet "tpub".
    public static let testnetVersion: UInt32 = 0x0435_87CF

    public let version: UInt32
    public let depth: UInt8
    /// The first 4 bytes of HASH160(enc(parent key)); zero at depth 0.
    public let parentFingerprint: [UInt8]
    /// The index that produced this key (bit 31 set for a hardened one); zero at depth 0.
    public let childNumber: UInt32
    public let chainCode: [UInt8]
    public let publicKey: Secp256k1.Point

    /// Fails (`invalidInput(.invalidParameters)`) on a 4-byte fingerprint or 32-byte chain code of
    /// another length, the identity, or depth 0 with a non-zero fingerprint or child number.
    public init(publicKey: Secp256k1.Point, chainCode: [UInt8], depth: UInt8 = 0,
                parentFingerprint: [UInt8] = [0, 0, 0, 0], childNumber: UInt32 = 0,
                version: UInt32 = mainnetVersion) throws(ProtocolError) {
        guard chainCode.count == 32, parentFingerprint.count == 4, !publicKey.isIdentity,
              depth > 0 || (parentFingerprint == [0, 0, 0, 0] && childNumber == 0)
        else { throw .invalidInput(.invalidParameters) }
        self.version = version
        self.depth = depth
        self.parentFingerprint = parentFingerprint
        self.childNumber = childNumber
        self.chainCode = chainCode
        self.publicKey = publicKey
    }

    /// Parses a Base58Check xpub/tpub string (checksum, length 78, a valid compressed point).
    public init(base58 text: String) throws(ProtocolError) {
        let invalid = ProtocolError.invalidInput(.invalidParameters)
        guard let data = Base58Check.decode(text), data.count == 78 else { throw invalid }
        var reader = ByteReader(data, from: nil)
        do {
            let version = try reader.readUInt32()
            guard version == Self.mainnetVersion || version == Self.testnetVersion else { throw invalid }
            let depth = try reader.readUInt8()
            let fingerprint = try reader.read(4)
            let child = try reader.readUInt32()
            let chainCode = try reader.read(32)
            let key = try reader.readSecp256k1Point()
            try reader.finish()
            try self.init(publicKey: key, chainCode: chainCode, depth: depth, parentFingerprint: fingerprint,
                          childNumber: child, version: version)
        } catch {
            throw invalid
        }
    }

    /// HASH160(enc(P))[0..4]: this key's fingerprint (its children's parent fingerprint).
    public var fingerprint: [UInt8] {
        // The identity is excluded at construction, so the encoding exists.
        let encoded = (try? publicKey.compressed()) ?? []
        return Array(RIPEMD160.hash(SHA256.hash(encoded)).prefix(4))
    }

    /// The 78-byte BIP32 serialisation.
    public var serialized: [UInt8] {
        var writer = ByteWriter(capacity: 78)
        writer.append(uint32: version)
        writer.append(uint8: depth)
        writer.append(parentFingerprint)
        writer.append(uint32: childNumber)
        writer.append(chainCode)
        try? writer.append(publicKey)
        return writer.bytes
    }

    /// The Base58Check string ("xpub…" on mainnet).
    public var base58: String { Base58Check.encode(serialized) }

    /// CKDpub along `path` (dkls23.md §14). A hardened index, IL ≥ q, an identity child or depth beyond 255 is
    /// `invalidInput(.invalidDerivationPath)`: hardened keys of a threshold key come from hard
    /// derivation (dkls23.md §15), which is not BIP32.
    public func derive(_ path: DerivationPath) throws(ProtocolError) -> BIP32ExtendedPublicKey {
        guard Int(depth) + path.indices.count <= 255 else { throw .invalidInput(.invalidDerivationPath) }
        var current = self
        for index in path.indices {
            guard index < 1 << 31 else { throw .invalidInput(.invalidDerivationPath) }
            let step = try DerivationPath(indices: [index]).derive(publicKey: current.publicKey,
                                                                   chainCode: current.chainCode)
            current = try BIP32ExtendedPublicKey(publicKey: step.publicKey, chainCode: step.chainCode,
                                                 depth: current.depth + 1, parentFingerprint: current.fingerprint,
                                                 childNumber: index, version: version)
        }
        return current
    }
}

extension BIP32ExtendedPublicKey: CustomStringConvertible {
    public var description: String { base58 }
}

/// BIP32 public derivation from a DKLs23 keyshare (public data only; no protocol run needed).
public enum DKLsBIP32 {
    /// The root extended public key: (P, cc) at depth 0.
    public static func rootPublicKey(keyshare: DKLsKeyshare) throws(ProtocolError) -> BIP32ExtendedPublicKey {
        try BIP32ExtendedPublicKey(publicKey: keyshare.publicKey, chainCode: keyshare.rootChainCode)
    }

    /// The extended public key at a soft path (CKDpub, dkls23.md §14); signing with the same path signs
    /// under its key. Hardened indices are `invalidInput(.invalidDerivationPath)`.
    public static func deriveChildPublicKey(keyshare: DKLsKeyshare, path: DerivationPath)
        throws(ProtocolError) -> BIP32ExtendedPublicKey {
        try rootPublicKey(keyshare: keyshare).derive(path)
    }
}
