import MPCCrypto
import MPCProtocols

/// A FROST signing run (`docs/protocol/frost.md` §9) of a message by the signers along a soft path: round 1 the
/// nonce commitments, round 2 the signature shares, then the aggregate signature (verified by libsodium,
/// RFC 8032 strict, under the derived key). The nonces are drawn when the run is made, from the caller's
/// generator.
package struct FROSTSignRun: SessionRun {
    private enum State: Sendable {
        case ready(FROST.SigningSession)
        case round1(FROST.SigningSession)
        case round2(FROST.SigningSession)
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
        let presignature = FROST.Presignature(keyshare: keyshare, using: &rng)
        let session = try FROST.SigningSession(keyshare: keyshare, signers: signers, message: message, path: path,
                                               presignature: presignature)
        progress = RunProgress(local: keyshare.party, participants: signers)
        state = .ready(session)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let session) = state else { throw .invalidInput(.invalidParameters) }
        state = .round1(session)
        progress.expect([FROST.MessageTag.signRound1.rawValue])
        return [ProtocolMessage(tag: FROST.MessageTag.signRound1.rawValue, from: local, to: nil, payload: session.round1Message)]
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .round1(var session):
            for (from, payload) in RunProgress<SessionSignature>.payloads(messages, tag: FROST.MessageTag.signRound1.rawValue) {
                try session.receiveRound1(payload, from: from)
            }
            let share = try session.round2()
            state = .round2(session)
            progress.expect([FROST.MessageTag.signRound2.rawValue])
            return [ProtocolMessage(tag: FROST.MessageTag.signRound2.rawValue, from: local, to: nil, payload: share)]
        case .round2(var session):
            for (from, payload) in RunProgress<SessionSignature>.payloads(messages, tag: FROST.MessageTag.signRound2.rawValue) {
                try session.receiveRound2(payload, from: from)
            }
            let signature = try session.signature()
            state = .finished
            progress.finish(.eddsa(signature))
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }
}
