import MPCCrypto
import MPCProtocols

/// A FROST signing run (`docs/protocol/frost.md` §10) of a message by the signers along a soft path: round 1 the
/// nonce commitments, round 2 the signature shares, then the aggregate signature (verified by libsodium,
/// RFC 8032 strict, under the derived key), computed by ``FROSTSignRounds`` (shared with preSignFinal). The
/// nonces are drawn when the run is made, from the caller's generator.
package struct FROSTSignRun: SessionRun {
    private enum State: Sendable {
        case ready(FROSTSignRounds)
        case round1(FROSTSignRounds)
        case round2(FROSTSignRounds)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [FROST.MessageTag.signRound1.rawValue, FROST.MessageTag.signRound2.rawValue]
    package private(set) var progress: RunProgress<SessionSignature>
    private var state: State
    /// FROST's rounds are a few Ed25519 operations.
    package var roundsAreShort: Bool { true }

    /// Signing of `message` with `keyshare` by `signers` along the soft `path`.
    package init(keyshare: FROST.Keyshare, signers: [PartyIndex], message: [UInt8], path: [UInt32],
                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
        let nonces = FROST.Presignature(keyshare: keyshare, using: &rng)
        let rounds = try FROSTSignRounds(keyshare: keyshare, signers: signers, message: message, path: path, nonces: nonces)
        progress = RunProgress(local: keyshare.party, participants: signers)
        state = .ready(rounds)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let rounds) = state else { throw .invalidInput(.invalidParameters) }
        state = .round1(rounds)
        progress.expect([FROST.MessageTag.signRound1.rawValue])
        return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil, payload: rounds.round1Message)]
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .round1(var rounds):
            let share = try rounds.round2(
                commitments: RunProgress<SessionSignature>.payloads(messages, tag: FROST.MessageTag.signRound1.rawValue))
            state = .round2(rounds)
            progress.expect([FROST.MessageTag.signRound2.rawValue])
            return [ProtocolMessage(tag: FROST.MessageTag.signRound2.rawValue, from: local, to: nil, payload: share)]
        case .round2(var rounds):
            let signature = try rounds.signature(
                shares: RunProgress<SessionSignature>.payloads(messages, tag: FROST.MessageTag.signRound2.rawValue))
            state = .finished
            progress.finish(.eddsa(signature))
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }
}
