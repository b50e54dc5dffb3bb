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

    /// A node's run factory for one operation (``factories``).
    package typealias Factory = @Sendable (Request, inout any RandomNumberGenerator) throws -> NodeProtocolRun

    /// The node's run factory of every operation that runs a protocol (its ``OperationTable`` row has receivable
    /// tags), keyed by the table's operation: adding an operation is its table row, its run type and its entry here.
    /// `OperationTableTests` checks that the keys are exactly the operations with receivable tags.
    package static let factories: [SessionOperation: Factory] = [
        .keygen: keygen, .refresh: refresh, .sign: sign, .preSign: presign, .recover: recover, .export: export,
        .import: importKey, .hardDerivation: hardDerivation,
    ]

    /// What a factory makes a run from: the validated SETUP, the node, its current share of the SETUP's key
    /// (decoded; nil for keygen and import).
    package struct Request: Sendable {
        package var setup: ValidatedSetup
        package var party: Party
        package var keyshare: Keyshare?

        /// The node's current share (KEY_NOT_FOUND without one).
        func current() throws -> Keyshare {
            guard let keyshare else { throw SessionError.detected(.keyNotFound, blamed: nil) }
            return keyshare
        }

        /// SETUP's soft derivation path (`m` without one).
        func softPath() throws -> DerivationPath {
            let path = try DerivationPathBytes(bytes: setup.payload.path ?? [0])
            return try DerivationPath((["m"] + path.indices.map { String($0) }).joined(separator: "/"))
        }
    }

    /// The run for `setup` at `party`, over `keyshare` (the node's current share of the SETUP's key,
    /// decoded; nil for keygen and import): the operation's factory (``factories``), if the party's mode serves the
    /// operation as a WebSocket step for the SETUP's algorithm (its table row). Throws for a SETUP whose fields the
    /// protocol refuses (the caller answers REJECT before its ACCEPT): the node's own refusals as `SessionError` (the
    /// wire's failure type, not the app SDK's public one), the protocol's and the keyshare's as they come.
    package static func make(for setup: ValidatedSetup, party: Party, keyshare: Keyshare?,
                             using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let row = setup.operation.row
        guard row.transports[party.mode] == .webSocket, row.algorithms.contains(setup.algorithm),
              let factory = factories[setup.operation]
        else { throw SessionError.detected(.unsupportedOperation, blamed: nil) }
        return try factory(Request(setup: setup, party: party, keyshare: keyshare), &rng)
    }
}

// The factories, one per operation that runs a protocol (``NodeProtocolRun/factories``).
extension NodeProtocolRun {
    static func keygen(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let (setup, party) = (request.setup, request.party)
        return .share(try SessionRuns.keygen(setup.algorithm, local: party.index, mode: party.mode,
                                             instanceID: setup.instanceID, setupHash: setup.setupHash,
                                             groupID: party.groupID, using: &rng))
    }

    static func refresh(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        .share(try SessionRuns.refresh(try request.current(), instanceID: request.setup.instanceID,
                                       setupHash: request.setup.setupHash, groupID: request.party.groupID, using: &rng))
    }

    static func importKey(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let (setup, party) = (request.setup, request.party)
        guard let publicKey = setup.payload.publicKey, let chainCode = setup.payload.chainCode else {
            throw SessionError.invalidParameter
        }
        let key = try SessionRuns.ImportedKey(algorithm: setup.algorithm, publicKey: publicKey)
        return .share(try SessionRuns.importKey(key, chainCode: chainCode, local: party.index, mode: party.mode,
                                                instanceID: setup.instanceID, setupHash: setup.setupHash,
                                                groupID: party.groupID, using: &rng))
    }

    static func hardDerivation(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let setup = request.setup
        guard let pathBytes = setup.payload.path else { throw SessionError.detected(.keyNotFound, blamed: nil) }
        let keyshare = try request.current()
        let indices = try DerivationPathBytes(bytes: pathBytes).indices
        let text = (["m"] + indices.map {
            $0 >= DerivationPathBytes.hardenedBit ? "\($0 - DerivationPathBytes.hardenedBit)'" : "\($0)"
        }).joined(separator: "/")
        return .share(try DKLsHardDerivationRun(keyshare: try keyshare.dklsKeyshare(),
                                                participants: setup.participants.parties,
                                                instanceID: setup.instanceID, setupHash: setup.setupHash,
                                                path: try DerivationPath(text, allowHardened: true),
                                                mode: request.party.mode, groupID: request.party.groupID))
    }

    static func presign(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let setup = request.setup
        let keyshare = try request.current()
        // The SETUP's algorithm must be the share's (as `dklsKeyshare()` / `frostKeyshare()` require).
        switch setup.algorithm {
        case .ecdsa: _ = try keyshare.dklsKeyshare()
        case .eddsa: _ = try keyshare.frostKeyshare()
        }
        return .presignature(try SessionRuns.presign(keyshare, signers: setup.participants.parties,
                                                     instanceID: setup.instanceID, setupHash: setup.setupHash,
                                                     path: try request.softPath(), using: &rng))
    }

    static func recover(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let (setup, party) = (request.setup, request.party)
        let (n, t) = SessionRuns.threshold(of: party.mode)
        guard let publicKey = setup.payload.publicKey else { throw SessionError.detected(.keyNotFound, blamed: nil) }
        switch setup.algorithm {
        case .ecdsa:
            let share = try request.current().dklsKeyshare()
            let expected = try Secp256k1.Point(compressed: publicKey)
            guard share.publicKey == expected, let holders = setup.holders?.parties else {
                throw SessionError.invalidParameter
            }
            return .share(try DKLsDKGRun.recover(local: party.index, partyCount: n, threshold: t,
                                                 instanceID: setup.instanceID, setupHash: setup.setupHash,
                                                 holders: holders, current: share, expectedPublicKey: expected,
                                                 mode: party.mode, groupID: party.groupID))
        case .eddsa:
            let share = try request.current().frostKeyshare()
            let expected = try FROST.Point(bytes: publicKey)
            guard share.publicKey == expected, let holders = setup.holders?.parties else {
                throw SessionError.invalidParameter
            }
            return .share(try FROSTRecoverRun(local: party.index, partyCount: n, threshold: t,
                                              instanceID: setup.instanceID, helpers: holders, current: share,
                                              expectedPublicKey: expected, mode: party.mode, groupID: party.groupID,
                                              using: &rng))
        }
    }

    static func export(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let setup = request.setup
        guard let exportKey = setup.payload.exportKey else { throw SessionError.detected(.keyNotFound, blamed: nil) }
        return .exportShare(try SessionRuns.exportSending(keyshare: try request.current(),
                                                          participants: setup.participants.parties,
                                                          receiverKey: try X25519.PublicKey(bytes: exportKey),
                                                          instanceID: setup.instanceID, setupHash: setup.setupHash))
    }

    static func sign(_ request: Request, using rng: inout any RandomNumberGenerator) throws -> NodeProtocolRun {
        let setup = request.setup
        guard let message = setup.payload.message else { throw SessionError.detected(.keyNotFound, blamed: nil) }
        return .signature(try SessionRuns.sign(try request.current(), signers: setup.participants.parties,
                                               instanceID: setup.instanceID, setupHash: setup.setupHash,
                                               path: try request.softPath(), message: message, using: &rng))
    }
}
