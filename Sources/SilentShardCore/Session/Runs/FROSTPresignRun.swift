import MPCCrypto
import MPCProtocols

/// A FROST presigning run (`docs/protocol/session.md` §5.2 "FROST preSign"): round 1 only — fresh nonces
/// (drawn when the run is made, from the caller's generator), the commitments broadcast; ends with the
/// presignature once the co-signer's commitments arrived.
package struct FROSTPresignRun: SessionRun {
    package static let receivableTags: Set<UInt16> = [FROST.MessageTag.signRound1.rawValue]
    private enum State: Sendable {
        case ready(FROST.Presignature)
        case awaitingCommitments(FROST.Presignature)
        case finished
    }

    package private(set) var progress: RunProgress<SessionPresignature>
    private var state: State
    /// FROST's rounds are a few Ed25519 operations.
    package var roundsAreShort: Bool { true }

    /// Presigning with `keyshare` by the two `signers`.
    package init(keyshare: FROST.Keyshare, signers: [PartyIndex],
                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
        guard signers.count == 2, signers.contains(keyshare.party) else { throw .invalidInput(.invalidParameters) }
        state = .ready(FROST.Presignature(keyshare: keyshare, using: &rng))
        progress = RunProgress(local: keyshare.party, participants: signers)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let presignature) = state else { throw .invalidInput(.invalidParameters) }
        state = .awaitingCommitments(presignature)
        progress.expect([FROST.MessageTag.signRound1.rawValue])
        return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil,
                                payload: presignature.round1Message)]
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        guard case .awaitingCommitments(let presignature) = state else { throw .invalidInput(.invalidParameters) }
        let received = RunProgress<SessionPresignature>.payloads(messages, tag: FROST.MessageTag.signRound1.rawValue)
        guard let (peer, payload) = received.first, payload.count == 64 else {
            throw .abort(party: peers.first, reason: .malformedMessage)
        }
        // The commitments must decode as valid points now (checked again at the final).
        guard (try? FROST.Point(bytes: Array(payload[0..<32]))) != nil, (try? FROST.Point(bytes: Array(payload[32...]))) != nil
        else { throw .abort(party: peer, reason: .malformedMessage) }
        state = .finished
        progress.finish(.eddsa(FROSTPresignatureShare(presignature: presignature, peer: peer, peerRound1: payload)))
        return []
    }
}
