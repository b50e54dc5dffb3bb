import MPCCrypto
import MPCProtocols

/// A FROST DKG run (`docs/protocol/frost.md` §8): keygen, refresh and import share one engine, chosen by the
/// mode. Two rounds over `FROST.KeyGeneration`'s round states, then the keyshare. The polynomial (and the
/// round-1 broadcast) is drawn when the run is made, from the caller's generator.
package struct FROSTDKGRun: SessionRun {
    private enum State: Sendable {
        case ready(FROST.KeyGeneration.Round1State, [ProtocolMessage])
        case round1(FROST.KeyGeneration.Round1State)
        case round2(FROST.KeyGeneration.Round2State)
        case finished
    }

    package static let receivableTags: Set<UInt16> = [FROST.MessageTag.dkgRound1.rawValue, FROST.MessageTag.dkgRound2.rawValue]
    package private(set) var progress: RunProgress<Keyshare>
    private var state: State
    private var label: KeyshareLabel
    /// FROST's rounds are a few Ed25519 operations.
    package var roundsAreShort: Bool { true }

    /// Party `local` of a `threshold`-of-`partyCount` run in `mode` (the session's instance id is the
    /// DKG's session id); the keyshare is recorded with `label`.
    init(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, mode: FROST.KeygenMode,
         label: KeyshareLabel, using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
        guard let t = UInt8(exactly: threshold), let n = UInt8(exactly: partyCount) else { throw .invalidInput(.invalidParameters) }
        let (round1, out) = try FROST.KeyGeneration.start(party: local, threshold: t, parties: n, sessionId: instanceID.bytes,
                                                          mode: mode, using: &rng)
        progress = RunProgress(local: local, participants: (0..<partyCount).map { PartyIndex($0) })
        state = .ready(round1, out)
        self.label = label
    }

    /// Keygen of a new `threshold`-of-`partyCount` key.
    package static func keygen(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, mode: Keyshare.Mode,
                               groupID: [UInt8]?, using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> Self {
        try Self(local: local, partyCount: partyCount, threshold: threshold, instanceID: instanceID, mode: .keygen,
                 label: KeyshareLabel(mode: mode, groupID: groupID), using: &rng)
    }

    /// Refresh of `current` by all `partyCount` parties (same key, new shares and generation); `current`
    /// must be a `threshold`-of-`partyCount` share (`invalidInput(.invalidKeyshare)`).
    package static func refresh(_ current: FROST.Keyshare, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                mode: Keyshare.Mode, groupID: [UInt8]?,
                                using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> Self {
        try Self(local: current.party, partyCount: partyCount, threshold: threshold, instanceID: instanceID,
                 mode: .refresh(current), label: KeyshareLabel(mode: mode, groupID: groupID), using: &rng)
    }

    /// Import among `partyCount` parties: the app (party 0) is the importer and alone passes `secret`.
    package static func importKey(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID,
                                  publicKey: FROST.Point, chainCode: ChainCode, secret: FROST.Scalar?, mode: Keyshare.Mode,
                                  groupID: [UInt8]?, using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> Self {
        let key = try FROST.ImportedKey(importer: 0, publicKey: publicKey, chainCode: chainCode.bytes, secret: secret)
        return try Self(local: local, partyCount: partyCount, threshold: threshold, instanceID: instanceID,
                        mode: .importKey(key), label: KeyshareLabel(mode: mode, groupID: groupID), using: &rng)
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard case .ready(let round1, let out) = state else { throw .invalidInput(.invalidParameters) }
        state = .round1(round1)
        progress.expect([FROST.MessageTag.dkgRound1.rawValue])
        return out
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        try progress.check(messages)
        switch state {
        case .round1(let round1):
            let (next, out) = try round1.round2(messages)
            state = .round2(next)
            progress.expect([FROST.MessageTag.dkgRound2.rawValue])
            return out
        case .round2(let round2):
            let keyshare = try label.keyshare(try round2.finish(messages))
            state = .finished
            progress.finish(keyshare)
            return []
        case .ready, .finished:
            throw .invalidInput(.invalidParameters)
        }
    }

    package mutating func recordGroup(_ group: [UInt8]) { label.groupID = group }
}
