import MPCCrypto
import MPCProtocols

/// A DKLs23 signing run (`dkls23.md` §13) of a 32-byte hash by two signers along a soft path: rounds 1–2
/// make the presignature (``DKLsPresigningRounds``), the finish round combines the signature (verified
/// under the derived key) through ``DKLsSignFinish`` (shared with preSignFinal).
package struct DKLsSignRun: SessionRun {
    private enum State: Sendable {
        case presigning(DKLsPresigningRounds)
        case finishing(DKLsSignFinish)
        case finished
    }

    package static let receivableTags: Set<UInt16> = DKLsPresigningRounds.receivableTags.union([DKLsTag.signFinish])
    package private(set) var progress: RunProgress<SessionSignature>
    private var state: State
    private let keyshare: DKLsKeyshare
    private let messageHash: [UInt8]

    /// Signing of `messageHash` (32 bytes) with `keyshare` by `signers` along the soft `path`.
    package init(keyshare: DKLsKeyshare, signers: [PartyIndex], instanceID: InstanceID, setupHash: SetupHash,
                 path: DerivationPath, messageHash: [UInt8]) throws(ProtocolError) {
        guard messageHash.count == 32 else { throw .invalidInput(.invalidParameters) }
        state = .presigning(try DKLsPresigningRounds(keyshare: keyshare, signers: signers, instanceID: instanceID,
                                                     setupHash: setupHash, path: path))
        progress = RunProgress(local: keyshare.partyIndex, participants: signers)
        self.keyshare = keyshare
        self.messageHash = messageHash
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .presigning(var rounds) = state else { throw .invalidInput(.invalidParameters) }
        let out = try rounds.start(&progress, using: &rng)
        state = .presigning(rounds)
        return out
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .presigning(var rounds):
            switch try rounds.advance(messages, &progress, using: &rng) {
            case .send(let out):
                state = .presigning(rounds)
                return out
            case .presignature(let presignature):
                let finish = try DKLsSignFinish(presignature: presignature, messageHash: messageHash, keyshare: keyshare)
                state = .finishing(finish)
                progress.expect([DKLsTag.signFinish])
                return [finish.message]
            }
        case .finishing(let finish):
            let signature = try finish.combine(messages)
            state = .finished
            progress.finish(.ecdsa(signature))
            return []
        case .finished:
            throw .invalidInput(.invalidParameters)
        }
    }
}
