import MPCCrypto
import MPCProtocols

/// A DKLs23 hard derivation run (`dkls23.md` §15) of a keyshare along a path (hardened markers allowed):
/// one broadcast round, then the child keyshare (a new key id).
package struct DKLsHardDerivationRun: SessionRun {
    private enum State: Sendable {
        case ready(DKLsHardDerivation.Parameters)
        case deriving(DKLsHardDerivation.State)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [DKLsTag.hardDerivation]
    package private(set) var progress: RunProgress<Keyshare>
    private var state: State
    private var label: KeyshareLabel

    /// Hard derivation of `keyshare` along `path` by `participants`; the child is recorded with `mode` and
    /// `groupID`.
    package init(keyshare: DKLsKeyshare, participants: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                 path: DerivationPath, mode: Keyshare.Mode, groupID: [UInt8]?) throws(ProtocolError) {
        let parameters = try DKLsHardDerivation.Parameters(keyshare: keyshare, participants: participants,
                                                           instanceId: instanceID.bytes, setupHash: setupHash.bytes, path: path)
        progress = RunProgress(local: keyshare.partyIndex, participants: participants)
        state = .ready(parameters)
        label = KeyshareLabel(mode: mode, groupID: groupID)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let parameters) = state else { throw .invalidInput(.invalidParameters) }
        let (next, message) = try DKLsHardDerivation.start(parameters, using: &rng)
        state = .deriving(next)
        progress.expect([DKLsTag.hardDerivation])
        return [message]
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        guard case .deriving(let deriving) = state else { throw .invalidInput(.invalidParameters) }
        let child = try label.keyshare(try deriving.finish(messages))
        state = .finished
        progress.finish(child)
        return []
    }

    package mutating func recordGroup(_ group: [UInt8]) { label.groupID = group }
}
