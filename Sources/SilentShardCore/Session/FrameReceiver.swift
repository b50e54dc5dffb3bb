import MPCCrypto
import MPCProtocols

/// The receive procedure of `docs/protocol/session.md` §3.5 for one party in one session, as a value: frames
/// in, authenticated payloads (or typed errors) out, no I/O, no clock. A failure in steps 1–5 changes
/// no state and blames nobody; only a frame that passes all five is recorded (seq advanced, `T`
/// extended) and handed on.
///
/// Scope: the sequenced session frames (ACCEPT, BCAST, P2P, READY, COMMIT, OUTCOME, ABORT, DONE,
/// STORED) and in-session REJECTs. SETUP is validated by `SetupValidator` (node) or is the app's own,
/// and starts the receiver; FINAL, EXPORT_RESPONSE, LINK_OPEN and PEER_STATUS have their own
/// handlers (HTTP, link) and are UNEXPECTED here.
package struct FrameReceiver: Sendable, SecretReflecting {
    /// How this party trusts node keys (session.md §4.4): the `cloudVerifyingKey` (duo node key or cluster key),
    /// the mode, and the device clock in seconds for certificate validity.
    package struct NodeTrust: Sendable {
        package var cloudKey: Ed25519.VerifyingKey
        package var nowSeconds: UInt64
        /// Trio: the `group_id` ACCEPTs must carry — at the app the one recorded in the keyshare at
        /// keygen (nil for keygen/import), at a node its own group.
        package var recordedGroupID: [UInt8]?
        package init(cloudKey: Ed25519.VerifyingKey, nowSeconds: UInt64, recordedGroupID: [UInt8]? = nil) {
            self.cloudKey = cloudKey
            self.nowSeconds = nowSeconds
            self.recordedGroupID = recordedGroupID
        }

        /// Whether `nodeKey` is party `sender`'s node key without an ACCEPT of it (a REJECT, a PRESIG_STATUS):
        /// in duo the `cloudVerifyingKey` itself, or, in either mode, a key its `certificate` — valid now,
        /// issued by the `cloudVerifyingKey` for `sender` and `mode` — names.
        package func trusts(_ nodeKey: Ed25519.VerifyingKey, certificate: NodeCertificate?, sender: PartyIndex,
                            mode: SessionMode) -> Bool {
            if mode == .duo && nodeKey == cloudKey { return true }
            guard let certificate, certificate.nodeKey == nodeKey else { return false }
            return (try? certificate.verify(issuer: cloudKey, senderIndex: sender, mode: mode, nowSeconds: nowSeconds)) != nil
        }
    }

    /// What to do with a frame that passed.
    package enum Disposition: Sendable, Equatable {
        /// Hand the payload to this party's session logic / protocol.
        case consume
        /// Consume it and forward the unchanged bytes to `party` (relay A, session.md §6.1).
        case consumeAndForward(to: PartyIndex)
        /// Forward only (relay A; the frame is not for it, and it cannot authenticate it).
        case forward(to: PartyIndex)
    }

    /// A frame after the procedure.
    package struct Received: Sendable, Equatable {
        package let header: FrameHeader
        /// The authenticated plaintext payload (empty for `forward`).
        package let payload: [UInt8]
        package let disposition: Disposition
        /// The original frame (for forwarding byte for byte).
        package let frame: Frame
    }

    private struct FrameIdentity: Hashable {
        let sender: PartyIndex, kind: UInt8, tag: UInt16, receiver: PartyIndex
    }

    package let local: PartyIndex
    package let mode: SessionMode
    package let algorithm: SessionAlgorithm
    package let instanceID: InstanceID
    package let setupHash: SetupHash
    package let participants: PartySet
    /// Whether this party relays (trio node A).
    package let relays: Bool
    private let trust: NodeTrust
    private let localKeys: SessionKeyPair?

    private var sequencer = IncomingSequencer()
    private var seen: Set<FrameIdentity> = []
    private var frameCounts: [PartyIndex: Int] = [:]
    private var sessionKeys: [PartyIndex: SessionPublicKeys] = [:]
    private var channels: [PartyIndex: PointToPointChannel] = [:]
    /// Accepted node payloads by sender.
    package private(set) var accepts: [PartyIndex: AcceptPayload] = [:]
    /// `T` so far (SETUP, ACCEPTs, BCASTs received, and this party's own via `recordSent`).
    package private(set) var transcript = TranscriptDigest()

    /// Starts the receiver from the session's SETUP (validated by the node, or the app's own). The
    /// SETUP counts as seq 0 of party 0's broadcast stream and enters `T`.
    package init(local: PartyIndex, setupFrame: Frame, setup: SetupPayload, localKeys: SessionKeyPair?,
                trust: NodeTrust, relays: Bool = false) throws(SessionError) {
        guard setupFrame.header.kind == .setup, let mode = setup.mode, let algorithm = setup.algorithm else {
            throw .unexpected
        }
        self.local = local
        self.mode = mode
        self.algorithm = algorithm
        instanceID = setupFrame.header.instanceID
        setupHash = SessionHash.setupHash(headerAndPayload: setupFrame.headerAndPayload)
        participants = try PartySet(bytes: setup.participants)
        self.relays = relays
        self.trust = trust
        self.localKeys = localKeys
        let stream = StreamID(sender: 0, receiver: setupFrame.header.receiver)
        sequencer.advance(stream)
        seen.insert(FrameIdentity(sender: 0, kind: FrameKind.setup.rawValue, tag: 0, receiver: setupFrame.header.receiver))
        frameCounts[0] = 1
        transcript.add(header: setupFrame.header, payload: setupFrame.body)
        if let keys = setup.sessionKeys {
            let appKeys = try SessionPublicKeys(bytes: keys)
            register(party: 0, keys: appKeys, channel: try makeChannel(to: 0, keys: appKeys))
        }
    }

    /// Whether `party`'s session keys are known (SETUP for the app, ACCEPT for a node).
    package func hasOpened(_ party: PartyIndex) -> Bool { sessionKeys[party] != nil }

    /// The P2P channel to a participant, once both sides' X25519 keys are known.
    package func channel(to party: PartyIndex) -> PointToPointChannel? { channels[party] }

    /// The preSignFinal key pair shared with `party` (session.md §8.1), from this party's and `party`'s session
    /// X25519 keys; nil before `party`'s keys are known or without local keys.
    package func preSignFinalKeys(with party: PartyIndex) throws(SessionError) -> PreSignFinalKeys? {
        guard let localKeys, let keys = sessionKeys[party] else { return nil }
        return try PreSignFinalKeys(local: local, localKey: localKeys.agreementKey, peer: party,
                                    peerKey: keys.agreementKey, setupHash: setupHash)
    }

    /// Adds a frame this party sent itself to `T` (its own broadcasts and, for nodes, its ACCEPT).
    package mutating func recordSent(_ frame: Frame) {
        transcript.add(header: frame.header, payload: frame.body)
    }

    /// The P2P channel to `party` for its session keys (nil when this party has no keys or does not
    /// participate). A weak X25519 key is BAD_AUTHENTICATOR (session.md §3.3).
    private func makeChannel(to party: PartyIndex, keys: SessionPublicKeys) throws(SessionError) -> PointToPointChannel? {
        guard let localKeys, party != local, participants.contains(local) else { return nil }
        return try PointToPointChannel(local: local, localKey: localKeys.agreementKey, peer: party,
                                       peerKey: keys.agreementKey, setupHash: setupHash)
    }

    private mutating func register(party: PartyIndex, keys: SessionPublicKeys, channel: PointToPointChannel?) {
        sessionKeys[party] = keys
        channels[party] = channel
    }

    /// Runs session.md §3.5 on one frame that arrived on a link whose possible senders are `link` (app: {1} in
    /// duo, {1, 2} at the app in trio via A; A: {0} from the app link, {2} from the B link; B: {1, 0}).
    /// `isExpected` is the state check of step 3 (session.md §5.3–5.4; the session state machine supplies it).
    package mutating func receive(_ frame: Frame, link: Set<PartyIndex>,
                                 isExpected: (FrameHeader) -> Bool = { _ in true }) throws(SessionError) -> Received {
        let header = frame.header
        // 1. Parse (structure was checked by Frame.parse; here the kind/tag agreement of session.md §3.7).
        guard ProtocolTagRegistry.isConsistent(kind: header.kind, tag: header.tag, algorithm: algorithm) else {
            throw .malformed
        }
        // 2. Bind.
        // The relay A may end a session it only relays with its own REJECT (session.md §6.1 rule 4).
        let relayReject = header.kind == .reject && mode == .trio && header.sender == 1
        // A REJECT to a SETUP the node could not parse carries a zero instance_id (session.md §4.5); it is only
        // ever reported (authenticated by the rules of `RejectPayload.sessionError`), never recorded.
        let unboundReject = header.kind == .reject && header.instanceID == .unbound
        guard header.instanceID == instanceID || unboundReject, header.sender != local,
              participants.contains(header.sender) || relayReject, link.contains(header.sender)
        else { throw .unexpected }
        let forwardTarget = relayTarget(for: header)
        let forSelf = header.receiver == local
            || (header.receiver == FrameHeader.everyParticipant && participants.contains(local))
        guard forSelf || forwardTarget != nil else { throw .unexpected }
        if !forSelf, let target = forwardTarget {
            return Received(header: header, payload: [], disposition: .forward(to: target), frame: frame)
        }
        switch header.kind {
        case .setup, .finalRequest, .finalResponse, .exportResponse, .linkOpen, .peerStatus, .presigQuery, .presigStatus:
            throw .unexpected
        default: break
        }
        // 3. State: a node's ACCEPT is its first frame; each (sender, kind, tag, receiver) once; the
        // per-sender frame limit; then the session state machine's own rule.
        let identity = FrameIdentity(sender: header.sender, kind: header.kind.rawValue, tag: header.tag,
                                     receiver: header.receiver)
        let opened = hasOpened(header.sender)
        if header.kind == .accept { guard !opened else { throw .unexpected } }
        else if header.kind != .reject { guard opened else { throw .unexpected } }
        guard !seen.contains(identity) else { throw .unexpected }
        guard (frameCounts[header.sender] ?? 0) < SessionConstants.maximumFramesPerSender else { throw .tooLarge }
        guard isExpected(header) else { throw .unexpected }
        // 4. Sequence.
        let stream = StreamID(sender: header.sender, receiver: header.receiver)
        if header.kind.isSequenced { try sequencer.check(stream, seq: header.seq) }
        // 5. Authenticate.
        let payload: [UInt8]
        var accept: (payload: AcceptPayload, channel: PointToPointChannel?)?
        switch header.kind {
        case .accept:
            let parsed = try AcceptPayload(bytes: frame.body)
            guard frame.hasValidSignature(by: parsed.nodeKey) else { throw .cloudVerificationFailed(.nodeSignature) }
            try parsed.verify(expectedSetupHash: setupHash, cloudKey: trust.cloudKey, sender: header.sender,
                              mode: mode, nowSeconds: trust.nowSeconds)
            if mode == .trio {
                try AcceptPayload.checkGroup(Array(accepts.values) + [parsed], recordedGroupID: trust.recordedGroupID)
            }
            // The node's X25519 key must agree (session.md §3.3) before anything is recorded.
            accept = (parsed, try makeChannel(to: header.sender, keys: parsed.sessionKeys))
            payload = frame.body
        case .reject:
            // Unverifiable REJECTs are still reported, flagged unauthenticated (session.md §4.5); either way the
            // session ends, so nothing is recorded.
            let parsed = try RejectPayload(bytes: frame.body)
            throw parsed.sessionError(frame: frame, trustedNodeKey: trustedRejectKey(parsed, sender: header.sender),
                                      expectedSetupHash: setupHash, expectedInstanceID: instanceID)
        case .pointToPoint:
            guard let channel = channels[header.sender] else { throw .badAuthenticator }
            payload = try channel.open(frame)
        default:
            guard let keys = sessionKeys[header.sender], frame.hasValidSignature(by: keys.signingKey) else {
                throw .badAuthenticator
            }
            payload = frame.body
        }
        // 6. Record.
        if let accept {
            register(party: header.sender, keys: accept.payload.sessionKeys, channel: accept.channel)
            accepts[header.sender] = accept.payload
        }
        if header.kind.isSequenced { sequencer.advance(stream) }
        seen.insert(identity)
        frameCounts[header.sender, default: 0] += 1
        transcript.add(header: header, payload: payload)
        let disposition: Disposition = forwardTarget.map { .consumeAndForward(to: $0) } ?? .consume
        return Received(header: header, payload: payload, disposition: disposition, frame: frame)
    }

    /// The node key a REJECT may be signed with: the sender's accepted node key; else in duo
    /// `cloudVerifyingKey`; else a key certified by a valid certificate in the REJECT itself.
    private func trustedRejectKey(_ reject: RejectPayload, sender: PartyIndex) -> Ed25519.VerifyingKey? {
        if let accepted = accepts[sender] { return accepted.nodeKey }
        return trust.trusts(reject.nodeKey, certificate: reject.certificate, sender: sender, mode: mode) ? reject.nodeKey : nil
    }

    /// Relay A (session.md §6.1): app frames to 2, or to 0xFF when B participates, go to B; B's frames to 0 or
    /// 0xFF go to the app.
    private func relayTarget(for header: FrameHeader) -> PartyIndex? {
        guard relays, mode == .trio, local == 1 else { return nil }
        let all = FrameHeader.everyParticipant
        switch header.sender {
        case 0 where header.receiver == 2 || (header.receiver == all && participants.contains(2)): return 2
        case 2 where header.receiver == 0 || header.receiver == all: return 0
        default: return nil
        }
    }
}

extension FrameReceiver: CustomStringConvertible {
    package var description: String { "FrameReceiver(party \(local), \(instanceID))" }
}
