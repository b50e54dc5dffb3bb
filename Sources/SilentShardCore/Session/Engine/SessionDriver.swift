import Foundation
import MPCProtocols

/// The transport-independent loop of a protocol step in any mode, shared by the app and the nodes (duo
/// is participants {0, 1}): send a round's frames as soon as they exist, read messages (from whichever
/// link) until the next round's inputs from every peer are buffered, run the round, repeat. Long rounds
/// run on `SessionCompute`'s queue, off the cooperative pool; short ones (FROST) where the caller is.
/// Frames for other parties that a relay receives are handed to `relay` as they arrive (session.md §6.1).
package enum SessionDriver {
    /// One transport message and the link it came on (the set of senders possible there, session.md §3.5).
    package struct Incoming: Sendable {
        package var bytes: [UInt8]
        package var link: Set<PartyIndex>
        package init(bytes: [UInt8], link: Set<PartyIndex>) {
            self.bytes = bytes
            self.link = link
        }
    }

    package typealias Send = ([Frame]) async throws(SilentShardError) -> Void
    package typealias Read = () async throws(SilentShardError) -> Incoming
    package typealias Relay = ([(frame: Frame, to: PartyIndex)]) async throws(SilentShardError) -> Void
    /// Runs one machine step that consumes the peers' messages — where the protocol's checks of them run.
    /// The default runs it; a node passes one that refuses a banned device's step before it runs and
    /// keeps one device's checks apart (session.md §9.4, security review finding 12).
    package typealias AdvanceGate = (_ advance: () async throws(SilentShardError) -> Void) async throws(SilentShardError) -> Void

    /// The gate that just runs the step.
    package static func ungated(_ advance: () async throws(SilentShardError) -> Void) async throws(SilentShardError) {
        try await advance()
    }

    /// Runs `run` to its outcome. `leadingFrames` go out in the same send as the first round.
    package static func run<Run: SessionRun>(_ run: Run, channel: inout PartyFrameChannel,
                                             leadingFrames: [Frame] = [], send: Send, read: Read,
                                             relay: Relay = { _ throws(SilentShardError) in },
                                             gate: AdvanceGate = ungated,
                                             randomness: SessionRandomness = .system) async throws(SilentShardError) -> Run.Outcome {
        let (started, out) = try await start(run, randomness: randomness)
        return try await self.run(started: started, unsent: out, channel: &channel, leadingFrames: leadingFrames, send: send,
                                  read: read, relay: relay, gate: gate, randomness: randomness)
    }

    /// Runs the first round of `run` and returns the started run with that round's messages.
    package static func start<Run: SessionRun>(_ run: Run,
                                               randomness: SessionRandomness = .system) async throws(SilentShardError)
        -> (Run, [ProtocolMessage]) {
        try await step(run, randomness: randomness) { (r: inout Run, rng: inout any RandomNumberGenerator) throws(ProtocolError) in
            try r.start(using: &rng)
        }
    }

    /// Runs the first round of `run` in place and returns that round's messages.
    package static func start<Run: SessionRun>(_ run: inout Run,
                                               randomness: SessionRandomness = .system) async throws(SilentShardError)
        -> [ProtocolMessage] {
        let (started, out) = try await start(run, randomness: randomness)
        run = started
        return out
    }

    /// Runs a run whose first round already ran (``start(_:randomness:)``) to its outcome; `unsent` are
    /// that round's messages not sent yet. The app starts a short first round before its SETUP goes out
    /// and sends its broadcasts with it (flight F1, session.md §5.2); the P2P messages need the nodes' session keys
    /// and follow their ACCEPTs.
    package static func run<Run: SessionRun>(started run: Run, unsent: [ProtocolMessage],
                                             channel: inout PartyFrameChannel, leadingFrames: [Frame] = [], send: Send,
                                             read: Read, relay: Relay = { _ throws(SilentShardError) in },
                                             gate: AdvanceGate = ungated,
                                             randomness: SessionRandomness = .system) async throws(SilentShardError) -> Run.Outcome {
        var (current, out) = (run, unsent)
        var pending = leadingFrames
        while true {
            pending += try channel.frames(for: out)
            if !pending.isEmpty { try await send(pending) }
            pending = []
            if let outcome = current.outcome { return outcome }
            var inputs = channel.take(tags: current.awaiting, from: current.awaitingSenders)
            while inputs == nil {
                // A cancelled task stops between messages and rounds, not only in its transport calls.
                if Task.isCancelled { throw .cancelled }
                try await receive(channel: &channel, read: read, relay: relay)
                inputs = channel.take(tags: current.awaiting, from: current.awaitingSenders)
            }
            if Task.isCancelled { throw .cancelled }
            let messages = inputs ?? []
            try await gate { () async throws(SilentShardError) in
                (current, out) = try await step(current, randomness: randomness) {
                    (r: inout Run, rng: inout any RandomNumberGenerator) throws(ProtocolError) in
                    try r.advance(messages, using: &rng)
                }
            }
        }
    }

    /// Reads one message, relays what is not for this party, and raises the failure it carried.
    package static func receive(channel: inout PartyFrameChannel, read: Read, relay: Relay) async throws(SilentShardError) {
        let incoming = try await read()
        let ingested = channel.ingest(incoming.bytes, link: incoming.link)
        if !ingested.forwards.isEmpty { try await relay(ingested.forwards) }
        if let failure = ingested.failure { throw failure }
    }

    /// Reads until a control frame of `kind` (from `sender`, if given) is buffered and returns it.
    package static func awaitControl(_ kind: FrameKind, from sender: PartyIndex? = nil, channel: inout PartyFrameChannel,
                                    read: Read, relay: Relay = { _ throws(SilentShardError) in })
        async throws(SilentShardError) -> FrameReceiver.Received {
        while true {
            if let frame = channel.take(kind: kind, from: sender) { return frame }
            try await receive(channel: &channel, read: read, relay: relay)
        }
    }

    /// Runs one step of `run` (`body`, with a generator from `randomness`) on `SessionCompute`'s queue, or
    /// where the caller is when the run's rounds are short (FROST: the hand-over to another thread and back
    /// would cost about as much as the step); protocol failures become `SilentShardError`.
    package static func step<Run: SessionRun>(_ run: Run, randomness: SessionRandomness = .system,
                                              _ body: @escaping @Sendable (inout Run, inout any RandomNumberGenerator)
                                                  throws(ProtocolError) -> [ProtocolMessage])
        async throws(SilentShardError) -> (Run, [ProtocolMessage]) {
        if run.roundsAreShort {
            var copy = run
            var rng = randomness.generator()
            do { let out = try body(&copy, &rng); return (copy, out) } catch { throw SilentShardError(error) }
        }
        do {
            return try await SessionCompute.run {
                var copy = run
                var rng = randomness.generator()
                let out = try body(&copy, &rng)
                return (copy, out)
            }
        } catch let error as ProtocolError {
            throw SilentShardError(error)
        } catch {
            throw .invalidInput(reason: "compute failed")
        }
    }
}
