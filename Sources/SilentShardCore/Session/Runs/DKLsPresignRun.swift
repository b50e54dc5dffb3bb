import MPCCrypto
import MPCProtocols

/// A DKLs23 presigning run (`dkls23.md` §13.4) by two signers along a soft path: rounds 1–2 of signing,
/// ending with this party's presignature (no message yet).
package struct DKLsPresignRun: SessionRun {
    private enum State: Sendable {
        case ready(DKLsSign.Parameters)
        case round1(DKLsSign.Round1State)
        case round2(DKLsSign.Round2State)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                                      DKLsTag.signRound2Direct]
    package private(set) var progress: RunProgress<SessionPresignature>
    private var state: State

    /// Presigning with `keyshare` by `signers` along the soft `path`.
    package init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                 path: DerivationPath) throws(ProtocolError) {
        let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instanceID.bytes,
                                                 setupHash: setupHash.bytes, path: path)
        progress = RunProgress(local: keyshare.partyIndex, participants: signers)
        state = .ready(parameters)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let parameters) = state else { throw .invalidInput(.invalidParameters) }
        let (next, out) = try DKLsSign.start(parameters, using: &rng)
        state = .round1(next)
        progress.expect([DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct])
        return out
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .round1(let round1):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .round2(next)
            progress.expect([DKLsTag.signRound2Direct])
            return out
        case .round2(let round2):
            let presignature = try round2.presignature(messages)
            state = .finished
            progress.finish(.ecdsa(presignature))
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }
}
