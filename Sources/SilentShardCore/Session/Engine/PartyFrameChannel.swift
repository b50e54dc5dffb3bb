import Foundation
import MPCCrypto
import MPCProtocols

/// One party's framing of a session in any mode (`docs/protocol/session.md` §3; duo is participants {0, 1}),
/// with the trio relay of node A (§6.1): protocol messages to signed BCAST / encrypted P2P frames,
/// control frames, and incoming bundles through `FrameReceiver` (session.md §3.5) into a buffer of authenticated
/// frames the protocol is not ready for yet (session.md §3.4: ≤ 64 frames / 1 MiB).
///
/// Every incoming message names the link it came on (the set of senders possible there, session.md §3.5 step 2);
/// frames the receiver marks for forwarding are returned to the caller, byte for byte, with their
/// target. Which control frames a party accepts is its mode's (``controlKinds(local:mode:)``). Errors
/// are `SilentShardError`; a frame-level failure names the sender the frame claimed (it is never blame).
package struct PartyFrameChannel: Sendable, SecretReflecting {
    /// This party.
    package let local: PartyIndex
    /// The session's participants other than this party (empty for a relay-only node A).
    package let peers: [PartyIndex]
    /// The session id.
    package var instanceID: InstanceID { receiver.instanceID }
    /// The session's receive state (T, accepted node payloads, channels).
    package private(set) var receiver: FrameReceiver
    private let keys: SessionKeyPair?
    private var outgoing: OutgoingSequencer
    private var buffered: [FrameReceiver.Received] = []
    private var bufferedBytes = 0
    /// The first authenticated ABORT received and its sender (the session is over then).
    package private(set) var peerAbort: (sender: PartyIndex, payload: AbortPayload)?
    /// Every authenticated ABORT received, by sender.
    package private(set) var aborts: [PartyIndex: AbortPayload] = [:]
    private let controlKinds: Set<FrameKind>
    private let protocolTags: Set<UInt16>

    /// What one incoming message produced: frames to pass on unchanged (relay A), and the failure
    /// that ends the session, if any (raised by the caller after forwarding, so e.g. the app's ABORT
    /// still reaches B).
    package struct Ingested: Sendable {
        package var forwards: [(frame: Frame, to: PartyIndex)] = []
        package var failure: SilentShardError?
    }

    /// The control frames `local` accepts from its peers in `mode` (session.md §3.5 step 3). The app: ACCEPT, REJECT,
    /// OUTCOME, ABORT, STORED (session.md §7.5; duo since v2's presignatures). A node: COMMIT, ABORT, DONE, and in trio
    /// the other node's ACCEPT and READY (session.md §7.2).
    package static func controlKinds(local: PartyIndex, mode: SessionMode) -> Set<FrameKind> {
        switch (local == 0, mode) {
        case (true, .duo): return [.accept, .reject, .outcome, .abort, .stored]
        case (true, .trio): return [.accept, .reject, .outcome, .abort, .stored]
        case (false, .duo): return [.commit, .abort, .done]
        case (false, .trio): return [.accept, .commit, .abort, .done, .ready]
        }
    }

    /// Starts the channel from the session's SETUP. `keys` is nil only for a relay-only node A.
    /// `relays` marks node A (session.md §6.1). The control frames accepted are the SETUP's mode's.
    package init(local: PartyIndex, setupFrame: Frame, setup: SetupPayload, keys: SessionKeyPair?,
                trust: FrameReceiver.NodeTrust, protocolTags: Set<UInt16>, relays: Bool = false) throws(SilentShardError) {
        guard let mode = setup.mode else { throw .invalidInput(reason: "unknown session mode") }
        self.local = local
        self.keys = keys
        outgoing = OutgoingSequencer(sender: local)
        if local == 0 { _ = outgoing.assign(receiver: FrameHeader.everyParticipant) }  // the SETUP is seq 0
        controlKinds = Self.controlKinds(local: local, mode: mode)
        self.protocolTags = protocolTags
        do {
            receiver = try FrameReceiver(local: local, setupFrame: setupFrame, setup: setup, localKeys: keys, trust: trust,
                                         relays: relays)
        } catch { throw SilentShardError(error) }
        let participants = receiver.participants
        peers = participants.contains(local) ? participants.parties.filter { $0 != local } : []
    }

    /// Whether this party is a participant (false for node A relaying a {0, 2} session).
    package var participates: Bool { receiver.participants.contains(local) }

    /// Builds and records a node's signed ACCEPT (seq 0 of its 0xFF stream).
    package mutating func acceptFrame(payload: AcceptPayload, nodeKey: Ed25519.SigningKey) -> Frame {
        let bytes = payload.encoded()
        let header = FrameHeader(kind: .accept, sender: local, receiver: FrameHeader.everyParticipant,
                                 seq: outgoing.assign(receiver: FrameHeader.everyParticipant),
                                 length: UInt32(bytes.count), instanceID: instanceID)
        let frame = Frame.signed(header: header, payload: bytes, key: nodeKey)
        receiver.recordSent(frame)
        return frame
    }

    /// Frames for protocol messages: broadcasts signed with the session key (and added to T), P2P
    /// encrypted to their receiver (whose X25519 key must be known: after its ACCEPT).
    package mutating func frames(for messages: [ProtocolMessage]) throws(SilentShardError) -> [Frame] {
        var frames: [Frame] = []
        for message in messages {
            if let to = message.to {
                guard peers.contains(to), let channel = receiver.channel(to: to) else {
                    throw .invalidInput(reason: "no channel to party \(to)")
                }
                do {
                    frames.append(try channel.seal(message.payload, tag: message.tag, seq: outgoing.assign(receiver: to),
                                                   instanceID: instanceID))
                } catch { throw SilentShardError(error) }
            } else {
                frames.append(try control(.broadcast, tag: message.tag, payload: message.payload))
            }
        }
        return frames
    }

    /// A session-key-signed frame: BCAST, COMMIT, ABORT, DONE to every participant; OUTCOME to the
    /// app; STORED to the app; READY to `to` (the other node).
    package mutating func control(_ kind: FrameKind, tag: UInt16 = 0, payload: [UInt8],
                                 to: PartyIndex? = nil) throws(SilentShardError) -> Frame {
        guard let keys else { throw .invalidInput(reason: "a relay has no session keys") }
        let receiverField: PartyIndex
        switch kind {
        case .outcome, .stored: receiverField = 0
        case .ready: receiverField = to ?? (local == 1 ? 2 : 1)
        default: receiverField = FrameHeader.everyParticipant
        }
        let frame: Frame
        do {
            frame = try keys.signedFrame(kind: kind, sender: local, receiver: receiverField, tag: tag,
                                         seq: outgoing.assign(receiver: receiverField), instanceID: instanceID,
                                         payload: payload)
        } catch { throw SilentShardError(error) }
        if kind == .broadcast { receiver.recordSent(frame) }
        return frame
    }

    /// Parses a transport message that arrived on a link whose possible senders are `link` and runs
    /// session.md §3.5 on each frame. Authenticated frames for this party go to the buffer; frames for another
    /// party come back in `forwards`. The first failure (or a peer's ABORT/REJECT) stops processing.
    package mutating func ingest(_ message: [UInt8], link: Set<PartyIndex>) -> Ingested {
        let frames: [Frame]
        do { frames = try Frame.parseBundle(message) } catch {
            return Ingested(forwards: [], failure: SilentShardError(error, frameSender: link.count == 1 ? link.first : nil))
        }
        return ingest(frames: frames, link: link)
    }

    /// Runs session.md §3.5 on already parsed frames (e.g. the early frames behind a SETUP).
    package mutating func ingest(frames: [Frame], link: Set<PartyIndex>) -> Ingested {
        var result = Ingested()
        for frame in frames {
            let sender = frame.header.sender
            let received: FrameReceiver.Received
            do {
                received = try receiver.receive(frame, link: link) { [controlKinds, protocolTags] header in
                    switch header.kind {
                    case .broadcast, .pointToPoint: return protocolTags.contains(header.tag)
                    default: return controlKinds.contains(header.kind)
                    }
                }
            } catch {
                result.failure = SilentShardError(error, frameSender: sender)
                return result
            }
            switch received.disposition {
            case .forward(let to):
                result.forwards.append((frame, to))
                // A relay passes B's REJECT to the app unchanged and then ends (session.md §6.1 rule 4).
                if received.header.kind == .reject {
                    result.failure = .peerUnavailable(party: SessionParty(index: sender))
                    return result
                }
                continue
            case .consumeAndForward(let to):
                result.forwards.append((frame, to))
            case .consume:
                break
            }
            if received.header.kind == .abort {
                do {
                    let payload = try AbortPayload(bytes: received.payload)
                    if peerAbort == nil { peerAbort = (sender, payload) }
                    aborts[sender] = payload
                    result.failure = SilentShardError(payload.sessionError(sender: sender))
                } catch {
                    result.failure = SilentShardError(error, frameSender: sender)
                }
                return result
            }
            bufferedBytes += received.payload.count
            guard buffered.count < SessionConstants.maximumBufferedFrames, bufferedBytes <= SessionConstants.maximumBufferedByteCount
            else {
                result.failure = .malformedMessage(party: SessionParty(index: sender))
                return result
            }
            buffered.append(received)
        }
        return result
    }

    /// Runs session.md §3.5 on already parsed frames for a party that relays nothing (the frames behind a SETUP at
    /// a duo node) and raises the failure they carried.
    package mutating func ingestConsuming(frames: [Frame], link: Set<PartyIndex>) throws(SilentShardError) {
        let ingested = ingest(frames: frames, link: link)
        if let failure = ingested.failure { throw failure }
        guard ingested.forwards.isEmpty else { throw .invalidInput(reason: "frames to relay at a party that does not relay") }
    }

    /// Removes and returns the protocol messages for `tags` once the message of every tag from every
    /// sender in `senders` (default: every peer) is buffered; else nil.
    package mutating func take(tags: Set<UInt16>, from senders: [PartyIndex]? = nil) -> [ProtocolMessage]? {
        let from = senders ?? peers
        func isProtocol(_ r: FrameReceiver.Received) -> Bool {
            (r.header.kind == .broadcast || r.header.kind == .pointToPoint) && tags.contains(r.header.tag)
                && from.contains(r.header.sender)
        }
        let matching = buffered.filter(isProtocol)
        let present = Set(matching.map { TagFrom(tag: $0.header.tag, from: $0.header.sender) })
        let needed = Set(tags.flatMap { tag in from.map { TagFrom(tag: tag, from: $0) } })
        guard needed.isSubset(of: present) else { return nil }
        buffered.removeAll(where: isProtocol)
        bufferedBytes = buffered.reduce(0) { $0 + $1.payload.count }
        return matching.map {
            ProtocolMessage(tag: $0.header.tag, from: $0.header.sender,
                            to: $0.header.receiver == FrameHeader.everyParticipant ? nil : $0.header.receiver,
                            payload: $0.payload)
        }
    }

    private struct TagFrom: Hashable {
        let tag: UInt16
        let from: PartyIndex
    }

    /// Removes and returns the first buffered control frame of `kind` (from `sender`, if given).
    package mutating func take(kind: FrameKind, from sender: PartyIndex? = nil) -> FrameReceiver.Received? {
        guard let index = buffered.firstIndex(where: { $0.header.kind == kind && (sender == nil || $0.header.sender == sender) })
        else { return nil }
        let frame = buffered.remove(at: index)
        bufferedBytes -= frame.payload.count
        return frame
    }

    /// The commit digest D of this session for a result (session.md §1.5) over T as this party saw it.
    package func commitDigest(keyID: KeyID, gen: Generation) -> [UInt8] {
        SessionHash.commitDigest(setupHash: receiver.setupHash, keyID: keyID, gen: gen, transcript: receiver.transcript.digest)
    }

    package var description: String { "PartyFrameChannel(party \(local), peers \(peers))" }
}
