import MPCCrypto
import MPCProtocols

/// The runs of the operations, by algorithm: the app and the nodes of duo and trio all make their runs
/// here. A mode is its (n, t), the party's index and the group recorded in new keyshares.
package enum SessionRuns {
    /// (n, t) of a mode: duo (2, 2), trio (3, 2).
    package static func threshold(of mode: Keyshare.Mode) -> (n: Int, t: Int) {
        let pair = (mode == .duo ? SessionMode.duo : SessionMode.trio).threshold
        return (Int(pair.n), Int(pair.t))
    }

    /// The protocol tags an operation's run may carry (known before the run exists, e.g. while the app
    /// waits for ACCEPTs): each run type's own set, as the operation's table row names it.
    package static func receivableTags(operation: SessionOperation, algorithm: SessionAlgorithm) -> Set<UInt16> {
        operation.row.receivableTags[algorithm] ?? []
    }

    /// Keygen of a new `algorithm` key among every party of `mode`.
    package static func keygen(_ algorithm: Keyshare.Algorithm, local: PartyIndex, mode: Keyshare.Mode, instanceID: InstanceID,
                               setupHash: SetupHash, groupID: [UInt8]?,
                               using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<Keyshare> {
        let (n, t) = threshold(of: mode)
        switch algorithm {
        case .ecdsa:
            return try DKLsDKGRun.keygen(local: local, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                                         mode: mode, groupID: groupID)
        case .eddsa:
            return try FROSTDKGRun.keygen(local: local, partyCount: n, threshold: t, instanceID: instanceID, mode: mode,
                                          groupID: groupID, using: &rng)
        }
    }

    /// Refresh of `keyshare`'s key by every party of its mode (same key, new shares and generation).
    package static func refresh(_ keyshare: Keyshare, instanceID: InstanceID, setupHash: SetupHash, groupID: [UInt8]?,
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<Keyshare> {
        let (n, t) = threshold(of: keyshare.mode)
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try DKLsDKGRun.refresh(share, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                                          mode: keyshare.mode, groupID: groupID)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try FROSTDKGRun.refresh(share, partyCount: n, threshold: t, instanceID: instanceID, mode: keyshare.mode,
                                           groupID: groupID, using: &rng)
        }
    }

    /// Import of `key` with its root `chainCode` into a fresh sharing among every party of `mode`.
    package static func importKey(_ key: ImportedKey, chainCode: ChainCode, local: PartyIndex, mode: Keyshare.Mode,
                                  instanceID: InstanceID, setupHash: SetupHash, groupID: [UInt8]?,
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<Keyshare> {
        let (n, t) = threshold(of: mode)
        switch key {
        case .ecdsa(let publicKey, let secret):
            return try DKLsDKGRun.importKey(local: local, partyCount: n, threshold: t, instanceID: instanceID, setupHash: setupHash,
                                            publicKey: publicKey, chainCode: chainCode, privateKey: secret, mode: mode,
                                            groupID: groupID)
        case .eddsa(let publicKey, let secret):
            return try FROSTDKGRun.importKey(local: local, partyCount: n, threshold: t, instanceID: instanceID,
                                             publicKey: publicKey, chainCode: chainCode, secret: secret, mode: mode,
                                             groupID: groupID, using: &rng)
        }
    }

    /// Signing of `message` (ECDSA: the 32-byte hash) by `signers` along the soft `path`.
    package static func sign(_ keyshare: Keyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                             path: DerivationPath, message: [UInt8],
                             using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<SessionSignature> {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try DKLsSignRun(keyshare: share, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path,
                                   messageHash: message)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try FROSTSignRun(keyshare: share, signers: signers, message: message, path: path.indices, using: &rng)
        }
    }

    /// Presigning (`dkls23.md` §13.4; FROST: round 1) by `signers` along the soft `path`.
    package static func presign(_ keyshare: Keyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                                path: DerivationPath,
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> any SessionRun<SessionPresignature> {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try DKLsPresignRun(keyshare: share, signers: signers, instanceID: instanceID, setupHash: setupHash, path: path)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try FROSTPresignRun(keyshare: share, signers: signers, using: &rng)
        }
    }

    /// Export at the receiver, the app (party 0): every party in `participants` sends its share
    /// encrypted to the one-time key's public half (`dkls23.md` §16).
    package static func exportReceiving(keyshare: Keyshare, participants: [PartyIndex], oneTimeKey: X25519.PrivateKey,
                                        instanceID: InstanceID,
                                        setupHash: SetupHash) throws(ProtocolError) -> any SessionRun<ExportedKey> {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try DKLsExportRun.Receiver(keyshare: share, participants: participants, oneTimeKey: oneTimeKey,
                                              instanceID: instanceID, setupHash: setupHash)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try FROSTExportRun.Receiver(keyshare: share, participants: participants, oneTimeKey: oneTimeKey,
                                               instanceID: instanceID, setupHash: setupHash)
        }
    }

    /// Export at an exporter (a node): its share, encrypted to the app's one-time key `receiverKey`, goes
    /// out in the first round and the run ends.
    package static func exportSending(keyshare: Keyshare, participants: [PartyIndex], receiverKey: X25519.PublicKey,
                                      instanceID: InstanceID,
                                      setupHash: SetupHash) throws(ProtocolError) -> any SessionRun<ExportShareSent> {
        switch keyshare.algorithm {
        case .ecdsa:
            guard let share = try? keyshare.dklsKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try DKLsExportRun.Sender(keyshare: share, participants: participants, receiverKey: receiverKey,
                                            instanceID: instanceID, setupHash: setupHash)
        case .eddsa:
            guard let share = try? keyshare.frostKeyshare() else { throw .invalidInput(.invalidKeyshare) }
            return try FROSTExportRun.Sender(keyshare: share, participants: participants, receiverKey: receiverKey,
                                             instanceID: instanceID, setupHash: setupHash)
        }
    }
}
