import MPCCrypto
import MPCProtocols
import SilentShardCore

/// The protocol run a node runs for a validated SETUP, grouped by how its step ends: a share is committed
/// (session.md §7.2), a signature confirmed by the app's DONE, a presignature stored (session.md §7.5), an exporter's share
/// sent. Each case holds a run of any type with that outcome (`SessionRun`). One factory for every mode (duo,
/// trio A, trio B): the modes differ only in the node's index, (n, t) and the group id recorded in new keyshares.
package enum NodeProtocolRun: Sendable {
    case share(any SessionRun<Keyshare>)
    case signature(any SessionRun<SessionSignature>)
    case presignature(any SessionRun<SessionPresignature>)
    case exportShare(any SessionRun<ExportShareSent>)

    /// Every protocol tag the run may receive (the channel's frame state check, session.md §3.5 step 3).
    package var receivableTags: Set<UInt16> {
        switch self {
        case .share(let run): return run.receivableTags
        case .signature(let run): return run.receivableTags
        case .presignature(let run): return run.receivableTags
        case .exportShare(let run): return run.receivableTags
        }
    }

    /// Who runs it: the node's index, its mode and (trio) its group.
    package struct Party: Sendable {
        package var index: PartyIndex
        package var mode: Keyshare.Mode
        package var groupID: [UInt8]?

        package init(index: PartyIndex, mode: Keyshare.Mode, groupID: [UInt8]?) {
            self.index = index
            self.mode = mode
            self.groupID = groupID
        }
    }

    /// Operations a duo node runs; the others are trio's.
    private static let duoOperations: Set<SessionOperation> = [.keygen, .refresh, .import, .sign, .preSign]

    /// The run for `setup` at `party`, over `keyshare` (the node's current share of the SETUP's key,
    /// decoded; nil for keygen and import). Throws for a SETUP whose fields the protocol refuses (the
    /// caller answers REJECT before its ACCEPT).
    package static func make(for setup: ValidatedSetup, party: Party, keyshare: Keyshare?,
                             using rng: inout some RandomNumberGenerator) throws -> NodeProtocolRun {
        let local = party.index, instanceID = setup.instanceID, setupHash = setup.setupHash
        let (n, t) = SessionRuns.threshold(of: party.mode)
        let (mode, groupID) = (party.mode, party.groupID)
        guard mode == .trio || duoOperations.contains(setup.operation) else { throw SilentShardError.unsupportedOperation }
        let algorithm = setup.algorithm
        func current() throws -> Keyshare {
            guard let keyshare else { throw SilentShardError.keyNotFound(keyId: nil) }
            return keyshare
        }
        func softPath() throws -> DerivationPath {
            let path = try DerivationPathBytes(bytes: setup.payload.path ?? [0])
            return try DerivationPath((["m"] + path.indices.map { String($0) }).joined(separator: "/"))
        }
        switch (setup.operation, algorithm) {
        case (.keygen, _):
            return .share(try SessionRuns.keygen(algorithm, local: local, mode: mode, instanceID: instanceID,
                                                 setupHash: setupHash, groupID: groupID, using: &rng))
        case (.refresh, _):
            return .share(try SessionRuns.refresh(try current(), instanceID: instanceID, setupHash: setupHash,
                                                  groupID: groupID, using: &rng))
        case (.import, _):
            guard let publicKey = setup.payload.publicKey, let chainCode = setup.payload.chainCode else {
                throw SilentShardError.invalidInput(reason: "import fields")
            }
            let key = try SessionRuns.ImportedKey(algorithm: algorithm, publicKey: publicKey)
            return .share(try SessionRuns.importKey(key, chainCode: chainCode, local: local, mode: mode,
                                                    instanceID: instanceID, setupHash: setupHash, groupID: groupID,
                                                    using: &rng))
        case (.hardDerivation, .ecdsa):
            guard let pathBytes = setup.payload.path else { throw SilentShardError.keyNotFound(keyId: nil) }
            let keyshare = try current()
            let indices = try DerivationPathBytes(bytes: pathBytes).indices
            let text = (["m"] + indices.map {
                $0 >= DerivationPathBytes.hardenedBit ? "\($0 - DerivationPathBytes.hardenedBit)'" : "\($0)"
            }).joined(separator: "/")
            return .share(try DKLsHardDerivationRun(keyshare: try keyshare.dklsKeyshare(),
                                                    participants: setup.participants.parties,
                                                    instanceID: instanceID, setupHash: setupHash,
                                                    path: try DerivationPath(text, allowHardened: true),
                                                    mode: mode, groupID: groupID))
        case (.preSign, _):
            let keyshare = try current()
            // The SETUP's algorithm must be the share's (as `dklsKeyshare()` / `frostKeyshare()` require).
            switch algorithm {
            case .ecdsa: _ = try keyshare.dklsKeyshare()
            case .eddsa: _ = try keyshare.frostKeyshare()
            }
            return .presignature(try SessionRuns.presign(keyshare, signers: setup.participants.parties,
                                                         instanceID: instanceID, setupHash: setupHash, path: try softPath(),
                                                         using: &rng))
        case (.recover, .ecdsa):
            guard let publicKey = setup.payload.publicKey else { throw SilentShardError.keyNotFound(keyId: nil) }
            let share = try current().dklsKeyshare()
            let expected = try Secp256k1.Point(compressed: publicKey)
            guard share.publicKey == expected, let holders = setup.holders?.parties else {
                throw SilentShardError.invalidInput(reason: "recover key")
            }
            return .share(try DKLsDKGRun.recover(local: local, partyCount: n, threshold: t, instanceID: instanceID,
                                                 setupHash: setupHash, holders: holders, current: share,
                                                 expectedPublicKey: expected, mode: mode, groupID: groupID))
        case (.recover, .eddsa):
            guard let publicKey = setup.payload.publicKey else { throw SilentShardError.keyNotFound(keyId: nil) }
            let share = try current().frostKeyshare()
            let expected = try FROST.Point(bytes: publicKey)
            guard share.publicKey == expected, let holders = setup.holders?.parties else {
                throw SilentShardError.invalidInput(reason: "recover key")
            }
            return .share(try FROSTRecoverRun(local: local, partyCount: n, threshold: t, instanceID: instanceID,
                                              helpers: holders, current: share, expectedPublicKey: expected,
                                              mode: mode, groupID: groupID, using: &rng))
        case (.export, _):
            guard let exportKey = setup.payload.exportKey else { throw SilentShardError.keyNotFound(keyId: nil) }
            return .exportShare(try SessionRuns.exportSending(keyshare: try current(),
                                                              participants: setup.participants.parties,
                                                              receiverKey: try X25519.PublicKey(bytes: exportKey),
                                                              instanceID: instanceID, setupHash: setupHash))
        case (.sign, _):
            guard let message = setup.payload.message else { throw SilentShardError.keyNotFound(keyId: nil) }
            return .signature(try SessionRuns.sign(try current(), signers: setup.participants.parties,
                                                   instanceID: instanceID, setupHash: setupHash, path: try softPath(),
                                                   message: message, using: &rng))
        default:
            throw SilentShardError.unsupportedOperation
        }
    }
}
