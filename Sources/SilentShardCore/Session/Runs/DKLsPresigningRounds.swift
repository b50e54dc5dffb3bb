import MPCCrypto
import MPCProtocols

/// Rounds 1–2 of DKLs23 signing (`dkls23.md` §13), which end in this party's presignature: the rounds the
/// signing run (``DKLsSignRun``, then its finish round) and the presigning run (``DKLsPresignRun``, which
/// stops there, `dkls23.md` §13.4) share.
struct DKLsPresigningRounds: Sendable {
    /// What one round gave: messages to send, or (after round 2) the presignature.
    enum Step: Sendable {
        case send([ProtocolMessage])
        case presignature(DKLsPresignature)
    }

    private enum State: Sendable {
        case ready(DKLsSign.Parameters)
        case round1(DKLsSign.Round1State)
        case round2(DKLsSign.Round2State)
        case done
    }

    /// The tags rounds 1–2 receive.
    static let receivableTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                              DKLsTag.signRound2Direct]
    private var state: State

    /// Presigning with `keyshare` by `signers` along the soft `path`.
    init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
         path: DerivationPath) throws(ProtocolError) {
        state = .ready(try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instanceID.bytes,
                                               setupHash: setupHash.bytes, path: path))
    }

    /// Round 1's messages; `progress` then awaits round 1 from every peer.
    mutating func start<Outcome>(_ progress: inout RunProgress<Outcome>,
                                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let parameters) = state else { throw .invalidInput(.invalidParameters) }
        let (next, out) = try DKLsSign.start(parameters, using: &rng)
        state = .round1(next)
        progress.expect([DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct])
        return out
    }

    /// Round 2's messages (then `progress` awaits round 2), or, after round 2, the presignature (the caller
    /// sets what `progress` awaits next).
    mutating func advance<Outcome>(_ messages: [ProtocolMessage], _ progress: inout RunProgress<Outcome>,
                                   using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> Step {
        switch state {
        case .round1(let round1):
            let (next, out) = try round1.round2(messages, using: &rng)
            state = .round2(next)
            progress.expect([DKLsTag.signRound2Direct])
            return .send(out)
        case .round2(let round2):
            let presignature = try round2.presignature(messages)
            state = .done
            return .presignature(presignature)
        case .ready, .done:
            throw .invalidInput(.invalidParameters)
        }
    }
}
