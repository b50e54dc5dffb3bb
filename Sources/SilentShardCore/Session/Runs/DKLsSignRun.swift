import MPCCrypto
import MPCProtocols

/// A DKLs23 signing run (`dkls23.md` §13) of a 32-byte hash by two signers along a soft path: rounds 1–2
/// make the presignature, the finish round combines the signature (verified under the derived key).
package struct DKLsSignRun: SessionRun {
    private enum State: Sendable {
        case ready(DKLsSign.Parameters)
        case round1(DKLsSign.Round1State)
        case round2(DKLsSign.Round2State)
        case finishing(DKLsSign.FinishState)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [DKLsTag.signRound1Broadcast, DKLsTag.signRound1Direct,
                                                      DKLsTag.signRound2Direct, DKLsTag.signFinish]
    package private(set) var progress: RunProgress<SessionSignature>
    private var state: State
    private let keyshare: DKLsKeyshare
    private let messageHash: [UInt8]

    /// Signing of `messageHash` (32 bytes) with `keyshare` by `signers` along the soft `path`.
    package init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                 path: DerivationPath, messageHash: [UInt8]) throws(ProtocolError) {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidParameters) }
        let parameters = try DKLsSign.Parameters(keyshare: keyshare, signers: signers, instanceId: instanceID.bytes,
                                                 setupHash: setupHash.bytes, path: path)
        progress = RunProgress(local: keyshare.partyIndex, participants: signers)
        state = .ready(parameters)
        self.keyshare = keyshare
        self.messageHash = messageHash
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
            let (finishState, message) = try presignature.finish(messageHash: messageHash, keyshare: keyshare)
            state = .finishing(finishState)
            progress.expect([DKLsTag.signFinish])
            return [message]
        case .finishing(let finishState):
            let signature = try finishState.combine(messages)
            state = .finished
            progress.finish(.ecdsa(signature))
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }
}
