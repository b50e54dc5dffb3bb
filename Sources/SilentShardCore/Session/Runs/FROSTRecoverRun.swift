import MPCCrypto
import MPCProtocols

/// A FROST recovery run (`docs/protocol/session.md` §6.4 with the SHOULD-refresh; `docs/protocol/frost.md` §12.1):
/// the holders (H = `helpers`) repair the share of the party without one, then all parties refresh.
/// Flow: R1 δ between the holders (0x4102, P2P); R2 each holder sends the recipient σ ‖ PKI (0x4202, P2P,
/// `FROST.Repair.PublicKeyInfo`) and its refresh round 1; the recipient requires every PKI copy
/// byte-identical with the key `expectedPublicKey`, checks σ's sum against its verifying share, then joins
/// the refresh (a ``FROSTDKGRun``). The result is a new generation of the same key at every party.
package struct FROSTRecoverRun: SessionRun {
    private enum State: Sendable {
        case helper(FROST.RepairHelper)
        case recipient(expected: FROST.Point, helpers: [PartyIndex])
        case refreshing(FROSTDKGRun)
    }

    package static let receivableTags: Set<UInt16> = FROSTDKGRun.receivableTags.union([FROST.MessageTag.repairStep1.rawValue,
                                                                                       FROST.MessageTag.repairStep2.rawValue])
    private var repair: RunProgress<Keyshare>
    private var state: State
    private var label: KeyshareLabel
    private let instanceID: InstanceID

    /// The repair's bookkeeping, then the refresh's.
    package var progress: RunProgress<Keyshare> {
        if case .refreshing(let refresh) = state { return refresh.progress }
        return repair
    }

    /// The repair steps are long (a step runs off the caller); the refresh's are FROST's.
    package var roundsAreShort: Bool {
        if case .refreshing = state { return true }
        return false
    }

    /// Party `local` of a recovery among `partyCount` parties: a holder passes its `current` share, the
    /// party in no holder set passes nil. Every party checks the key is `expectedPublicKey`.
    package init(local: PartyIndex, partyCount: Int, threshold: Int, instanceID: InstanceID, helpers: [PartyIndex],
                 current: FROST.Keyshare?, expectedPublicKey: FROST.Point, mode: Keyshare.Mode, groupID: [UInt8]?,
                 using rng: inout some RandomNumberGenerator) throws(ProtocolError) {
        let all = (0..<partyCount).map { PartyIndex($0) }
        let sortedHelpers = helpers.sorted()
        guard let lost = all.first(where: { !sortedHelpers.contains($0) }), all.count == sortedHelpers.count + 1,
              sortedHelpers.count >= threshold
        else { throw .invalidInput(.invalidParameters) }
        if let current {
            guard current.party == local, current.publicKey == expectedPublicKey, Int(current.parties) == partyCount,
                  Int(current.threshold) == threshold, sortedHelpers.contains(local)
            else { throw .invalidInput(.invalidParameters) }
            state = .helper(try FROST.RepairHelper(keyshare: current, helpers: sortedHelpers, lost: lost, using: &rng))
        } else {
            guard local == lost else { throw .invalidInput(.invalidParameters) }
            state = .recipient(expected: expectedPublicKey, helpers: sortedHelpers)
        }
        repair = RunProgress(local: local, participants: all)
        label = KeyshareLabel(mode: mode, groupID: groupID)
        self.instanceID = instanceID
    }

    package mutating func start(using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        guard repair.awaiting.isEmpty else { throw .invalidInput(.invalidParameters) }
        switch state {
        case .helper(let helper):
            repair.expect([FROST.MessageTag.repairStep1.rawValue], from: helper.helpers.filter { $0 != local })
            return helper.step1Messages.sorted { $0.key < $1.key }.map {
                ProtocolMessage(tag: FROST.MessageTag.repairStep1.rawValue, from: local, to: $0.key, payload: $0.value)
            }
        case .recipient(_, let helpers):
            repair.expect([FROST.MessageTag.repairStep2.rawValue], from: helpers)
            return []
        case .refreshing:
            throw .invalidInput(.invalidParameters)
        }
    }

    package mutating func advance(_ messages: [ProtocolMessage],
                                  using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        switch state {
        case .helper(var helper):
            try repair.check(messages)
            for (from, payload) in RunProgress<Keyshare>.payloads(messages, tag: FROST.MessageTag.repairStep1.rawValue) {
                try helper.receiveStep1(payload, from: from)
            }
            let step2 = try helper.step2Payload()
            let refreshOut = try startRefresh(of: helper.keyshare, using: &rng)
            return [ProtocolMessage(tag: FROST.MessageTag.repairStep2.rawValue, from: local, to: helper.lost, payload: step2)]
                + refreshOut
        case .recipient(let expected, let helpers):
            try repair.check(messages)
            let repaired = try Self.repairedShare(local: local, peerCount: repair.peers.count, expected: expected,
                                                  helpers: helpers, messages: messages)
            return try startRefresh(of: repaired, using: &rng)
        case .refreshing(var refresh):
            let out = try refresh.advance(messages, using: &rng)
            state = .refreshing(refresh)
            return out
        }
    }

    package mutating func recordGroup(_ group: [UInt8]) {
        label.groupID = group
        if case .refreshing(var refresh) = state {
            refresh.recordGroup(group)
            state = .refreshing(refresh)
        }
    }

    /// Joins the refresh of `share`'s key with every party; returns its round-1 broadcast.
    private mutating func startRefresh(of share: FROST.Keyshare,
                                       using rng: inout some RandomNumberGenerator) throws(ProtocolError) -> [ProtocolMessage] {
        var refresh = try FROSTDKGRun.refresh(share, partyCount: Int(share.parties), threshold: Int(share.threshold),
                                              instanceID: instanceID, mode: label.mode, groupID: label.groupID, using: &rng)
        let out = try refresh.start(using: &rng)
        state = .refreshing(refresh)
        return out
    }

    /// The recipient's repaired share from every holder's σ ‖ PKI. Every holder's PKI must be
    /// byte-identical (a lying holder cannot substitute a key); two differing copies cannot tell which
    /// holder lied, so nobody is named.
    private static func repairedShare(local: PartyIndex, peerCount: Int, expected: FROST.Point, helpers: [PartyIndex],
                                      messages: [ProtocolMessage]) throws(ProtocolError) -> FROST.Keyshare {
        let received = RunProgress<Keyshare>.payloads(messages, tag: FROST.MessageTag.repairStep2.rawValue)
        for (from, payload) in received where payload.count <= 32 { throw .abort(party: from, reason: .malformedMessage) }
        guard let first = received.first else { throw .abort(party: nil, reason: .missingMessages) }
        let pki = Array(first.1[32...])
        guard received.allSatisfy({ Array($0.1[32...]) == pki }) else { throw .abort(party: nil, reason: .publicKeyMismatch) }
        let info = try FROST.Repair.PublicKeyInfo(bytes: pki, from: first.0)
        guard info.publicKey == expected, Int(info.parties) == peerCount + 1 else {
            throw .abort(party: nil, reason: .publicKeyMismatch)
        }
        var recipient = try FROST.RepairRecipient(party: local, helpers: helpers, publicKeyInfo: info)
        for (from, payload) in received { try recipient.receiveStep2(Array(payload[0..<32]), from: from) }
        return try recipient.finish()
    }
}
