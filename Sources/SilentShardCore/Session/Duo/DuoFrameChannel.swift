import Foundation
import MPCCrypto
import MPCProtocols

/// One party's framing of a duo session (`specs/session.md` §3): protocol messages to signed BCAST /
/// encrypted P2P frames, control frames, and incoming bundles through `FrameReceiver` (§3.5) into a
/// buffer of authenticated frames that the protocol is not ready for yet (§3.4: ≤ 64 frames / 1 MiB).
///
/// Errors are `SilentShardError`; a frame-level failure names the sender the frame claimed (it is
/// never blame). Used by the app's `DuoSession` and the node's `DuoStepRunner`.
package struct DuoFrameChannel: Sendable, SecretReflecting {
    /// This party (0 = app, 1 = node).
    package let local: PartyIndex
    /// The other participant.
    package var peer: PartyIndex { local == 0 ? 1 : 0 }
    /// The session id.
    package var instanceID: [UInt8] { receiver.instanceID }
    /// The session's receive state (T, accepted node payloads, channels).
    package private(set) var receiver: FrameReceiver
    private let keys: SessionKeyPair
    private var outgoing: OutgoingSequencer
    private var buffered: [FrameReceiver.Received] = []
    /// The peer's authenticated ABORT, once one arrived (the session is over then).
    package private(set) var peerAbort: AbortPayload?
    private var bufferedBytes = 0
    /// Kinds this party accepts from its peer besides BCAST/P2P (app: ACCEPT, OUTCOME, ABORT; node:
    /// COMMIT, ABORT, DONE).
    private let controlKinds: Set<FrameKind>
    /// Protocol tags the current operation may carry.
    private let protocolTags: Set<UInt16>

    /// Starts the channel from the session's SETUP. `outgoing` is this party's sequencer (a node
    /// passes the one it used for its ACCEPT).
    package init(local: PartyIndex, setupFrame: Frame, setup: SetupPayload, keys: SessionKeyPair,
                trust: FrameReceiver.NodeTrust, protocolTags: Set<UInt16>) throws(SilentShardError) {
        self.local = local
        self.keys = keys
        outgoing = OutgoingSequencer(sender: local)
        if local == 0 { _ = outgoing.assign(receiver: FrameHeader.everyParticipant) }  // the SETUP is seq 0
        controlKinds = local == 0 ? [.accept, .reject, .outcome, .abort] : [.commit, .abort, .done]
        self.protocolTags = protocolTags
        do {
            receiver = try FrameReceiver(local: local, setupFrame: setupFrame, setup: setup, localKeys: keys, trust: trust)
        } catch { throw SilentShardError(error) }
    }

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
    /// encrypted to the peer. P2P needs the peer's X25519 key (after ACCEPT at the app).
    package mutating func frames(for messages: [ProtocolMessage]) throws(SilentShardError) -> [Frame] {
        var frames: [Frame] = []
        for message in messages {
            if let to = message.to {
                guard to == peer, let channel = receiver.channel(to: peer) else { throw .invalidInput(reason: "no channel to party \(to)") }
                do {
                    frames.append(try channel.seal(message.payload, tag: message.tag, seq: outgoing.assign(receiver: to),
                                                   instanceID: instanceID))
                } catch { throw SilentShardError(error) }
            } else {
                let frame = try control(.broadcast, tag: message.tag, payload: message.payload)
                frames.append(frame)
            }
        }
        return frames
    }

    /// A session-key-signed frame to every participant (BCAST, COMMIT, OUTCOME, ABORT, DONE).
    package mutating func control(_ kind: FrameKind, tag: UInt16 = 0, payload: [UInt8]) throws(SilentShardError) -> Frame {
        let receiverField: PartyIndex = (kind == .outcome) ? 0 : FrameHeader.everyParticipant
        let frame: Frame
        do {
            frame = try keys.signedFrame(kind: kind, sender: local, receiver: receiverField, tag: tag,
                                         seq: outgoing.assign(receiver: receiverField), instanceID: instanceID,
                                         payload: payload)
        } catch { throw SilentShardError(error) }
        if kind == .broadcast { receiver.recordSent(frame) }
        return frame
    }

    /// Parses a received transport message and runs §3.5 on each frame; authenticated frames go to the
    /// buffer. A peer's ABORT or REJECT ends the session with its (reported) error.
    package mutating func ingest(_ message: [UInt8]) throws(SilentShardError) {
        let frames: [Frame]
        do { frames = try Frame.parseBundle(message) } catch { throw SilentShardError(error) }
        try ingest(frames: frames)
    }

    /// Runs §3.5 on already parsed frames (e.g. the app's early frames behind its SETUP).
    package mutating func ingest(frames: [Frame]) throws(SilentShardError) {
        for frame in frames {
            let sender = frame.header.sender
            let received: FrameReceiver.Received
            do {
                received = try receiver.receive(frame, link: [peer]) { [controlKinds, protocolTags] header in
                    switch header.kind {
                    case .broadcast, .pointToPoint: return protocolTags.contains(header.tag)
                    default: return controlKinds.contains(header.kind)
                    }
                }
            } catch { throw SilentShardError(error, frameSender: sender) }
            if received.header.kind == .abort {
                let payload: AbortPayload
                do { payload = try AbortPayload(bytes: received.payload) } catch { throw SilentShardError(error, frameSender: sender) }
                peerAbort = payload
                throw SilentShardError(payload.sessionError(sender: sender))
            }
            bufferedBytes += received.payload.count
            guard buffered.count < SessionConstants.maximumBufferedFrames, bufferedBytes <= SessionConstants.maximumBufferedByteCount
            else { throw .malformedMessage(party: SessionParty(index: sender)) }
            buffered.append(received)
        }
    }

    /// Removes and returns the protocol messages for `tags` once all of them are buffered; else nil.
    package mutating func take(tags: Set<UInt16>) -> [ProtocolMessage]? {
        let matching = buffered.filter { ($0.header.kind == .broadcast || $0.header.kind == .pointToPoint) && tags.contains($0.header.tag) }
        guard Set(matching.map(\.header.tag)) == tags else { return nil }
        buffered.removeAll { ($0.header.kind == .broadcast || $0.header.kind == .pointToPoint) && tags.contains($0.header.tag) }
        bufferedBytes = buffered.reduce(0) { $0 + $1.payload.count }
        return matching.map {
            ProtocolMessage(tag: $0.header.tag, from: $0.header.sender,
                            to: $0.header.receiver == FrameHeader.everyParticipant ? nil : $0.header.receiver,
                            payload: $0.payload)
        }
    }

    /// Removes and returns the first buffered control frame of `kind`.
    package mutating func take(kind: FrameKind) -> FrameReceiver.Received? {
        guard let index = buffered.firstIndex(where: { $0.header.kind == kind }) else { return nil }
        let frame = buffered.remove(at: index)
        bufferedBytes -= frame.payload.count
        return frame
    }

    /// The commit digest D of this session for a result (§1.5) over T as this party saw it.
    package func commitDigest(keyID: [UInt8], gen: [UInt8]) -> [UInt8] {
        SessionHash.commitDigest(setupHash: receiver.setupHash, keyID: keyID, gen: gen, transcript: receiver.transcript.digest)
    }

    package var description: String { "DuoFrameChannel(party \(local))" }
}

/// The duo machine's step on `SessionCompute` (this goes with `Session/Duo/` when duo runs on the
/// n-party engine, issue 18).
package enum DuoCompute {

    /// Runs one machine step on the compute queue (a short FROST step where the caller is: the hand-over
    /// to another thread and back would cost about as much as the step); protocol failures become
    /// `SilentShardError`.
    package static func step(_ machine: DuoProtocolMachine,
                            _ body: @escaping @Sendable (inout DuoProtocolMachine) throws(ProtocolError) -> [ProtocolMessage])
        async throws(SilentShardError) -> (DuoProtocolMachine, [ProtocolMessage]) {
        if machine.roundsAreShort {
            var copy = machine
            do { let out = try body(&copy); return (copy, out) } catch { throw SilentShardError(error) }
        }
        do {
            return try await SessionCompute.run {
                var copy = machine
                let out = try body(&copy)
                return (copy, out)
            }
        } catch let error as ProtocolError {
            throw SilentShardError(error)
        } catch {
            throw .invalidInput(reason: "compute failed")
        }
    }
}
