import MPCCrypto
import MPCProtocols

/// The runs of the operations every mode has, by algorithm: keygen, refresh, import and sign. A mode is
/// its (n, t), the party's index and the group recorded in new keyshares; the app and the nodes of duo
/// and trio all make their runs here.
extension SessionProtocolMachine {
    /// (n, t) of a mode: duo (2, 2), trio (3, 2).
    package static func threshold(of mode: Keyshare.Mode) -> (n: Int, t: Int) {
        let pair = (mode == .duo ? SessionMode.duo : SessionMode.trio).threshold
        return (Int(pair.n), Int(pair.t))
    }

    /// Keygen of a new `algorithm` key among every party of `mode`.
    package static func keygen(_ algorithm: Keyshare.Algorithm, local: PartyIndex, mode: Keyshare.Mode, instanceID: InstanceID,
                               setupHash: SetupHash, groupID: [UInt8]?,
                               using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let (n, t) = threshold(of: mode)
        switch algorithm {
        case .ecdsa:
            return try dklsDKG(local: local, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                               mode: mode, groupID: groupID)
        case .eddsa:
            return try frostDKG(local: local, partyCount: n, threshold: t, instanceID: instanceID, mode: mode, groupID: groupID,
                                using: &rng)
        }
    }

    /// Refresh of `keyshare`'s key by every party of its mode (same key, new shares and generation).
    package static func refresh(_ keyshare: Keyshare, instanceID: InstanceID, setupHash: SetupHash, groupID: [UInt8]?,
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let (n, t) = threshold(of: keyshare.mode)
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try dklsDKG(local: share.partyIndex, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                               mode: keyshare.mode, groupID: groupID, refreshing: share)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try frostDKG(local: share.party, partyCount: n, threshold: t, instanceID: instanceID, mode: keyshare.mode,
                                groupID: groupID, refreshing: share, using: &rng)
        }
    }

    /// Signing of `message` (ECDSA: the 32-byte hash) by `signers` along the soft `path`.
    package static func sign(_ keyshare: Keyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                             path: DerivationPath, message: [UInt8],
                             using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<SessionSignature> {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try dklsSign(keyshare: share, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path,
                                messageHash: message)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try frostSign(keyshare: share, signers: signers, message: message, path: path.indices, using: &rng)
        }
    }

    /// A key to import (the importer, the app, knows its secret; the other parties only its public key).
    package enum ImportedKey: Sendable {
        case ecdsa(publicKey: Secp256k1.Point, secret: Secp256k1.Scalar?)
        case eddsa(publicKey: FROST.Point, secret: FROST.Scalar?)

        /// The importer's key from its 32 private bytes. ECDSA: the big-endian secp256k1 scalar; EdDSA:
        /// the RFC 8032 seed.
        package init(algorithm: Keyshare.Algorithm, privateKey: [UInt8]) throws(SilentShardError) {
            switch algorithm {
            case .ecdsa:
                guard let x = try? Secp256k1.Scalar(nonZeroBytes: privateKey) else {
                    throw .invalidInput(reason: "private key is not a valid secp256k1 scalar")
                }
                self = .ecdsa(publicKey: Secp256k1.Point(base: x), secret: x)
            case .eddsa:
                guard let x = try? FROST.secretScalar(fromSeed: privateKey) else {
                    throw .invalidInput(reason: "private key is not a 32-byte Ed25519 seed")
                }
                self = .eddsa(publicKey: FROST.Point(base: x), secret: x)
            }
        }

        /// Another party's view of the key: the SETUP's public key, no secret.
        package init(algorithm: Keyshare.Algorithm, publicKey: [UInt8]) throws(SilentShardError) {
            do {
                switch algorithm {
                case .ecdsa: self = .ecdsa(publicKey: try Secp256k1.Point(compressed: publicKey), secret: nil)
                case .eddsa: self = .eddsa(publicKey: try FROST.Point(bytes: publicKey), secret: nil)
                }
            } catch { throw .invalidInput(reason: "import public key") }
        }

        /// The key's protocol key id.
        package func keyID() throws(SilentShardError) -> KeyID {
            switch self {
            case .ecdsa(let point, _):
                guard let bytes = try? DKLsDKG.keyId(for: point), let id = KeyID(bytes) else { throw .invalidInput(reason: "private key") }
                return id
            case .eddsa(let point, _):
                guard let id = KeyID(FROST.keyId(for: point)) else { throw .invalidInput(reason: "private key") }
                return id
            }
        }

        /// The public key as SETUP carries it (33-byte compressed / 32 bytes).
        package func publicKeyBytes() throws(SilentShardError) -> [UInt8] {
            switch self {
            case .ecdsa(let point, _):
                guard let compressed = try? point.compressed() else { throw .invalidInput(reason: "private key") }
                return compressed
            case .eddsa(let point, _): return point.bytes
            }
        }
    }

    /// Import of `key` with its root `chainCode` into a fresh sharing among every party of `mode`.
    package static func importKey(_ key: ImportedKey, chainCode: ChainCode, local: PartyIndex, mode: Keyshare.Mode,
                                  instanceID: InstanceID, setupHash: SetupHash, groupID: [UInt8]?,
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> ProtocolRun<Keyshare> {
        let (n, t) = threshold(of: mode)
        switch key {
        case .ecdsa(let publicKey, let secret):
            return try dklsImport(local: local, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                                  publicKey: publicKey, chainCode: chainCode, privateKey: secret, mode: mode, groupID: groupID)
        case .eddsa(let publicKey, let secret):
            return try frostImport(local: local, partyCount: n, threshold: t, instanceID: instanceID, publicKey: publicKey,
                                   chainCode: chainCode, secret: secret, mode: mode, groupID: groupID, using: &rng)
        }
    }
}
