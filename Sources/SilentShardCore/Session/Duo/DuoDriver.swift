import Foundation
import MPCProtocols

/// The transport-independent loop of a duo step, shared by the app and the node: send a round's
/// frames as soon as they exist, read bundles until the next round's inputs are all buffered, run the
/// round off the cooperative pool, repeat.
package enum DuoDriver {
    /// Runs `machine` to its result. `leadingFrames` go out in the same bundle as the first round
    /// (the node's ACCEPT).
    /// `gate` runs each step that consumes the peer's messages (``SessionDriver/AdvanceGate``).
    package static func runProtocol(_ machine: DuoProtocolMachine, channel: inout DuoFrameChannel, leadingFrames: [Frame] = [],
                                   send: ([Frame]) async throws(SilentShardError) -> Void,
                                   read: () async throws(SilentShardError) -> [UInt8],
                                   gate: SessionDriver.AdvanceGate = SessionDriver.ungated) async throws(SilentShardError) -> ProtocolResult {
        let (started, firstRound) = try await DuoCompute.step(machine) { (m: inout DuoProtocolMachine) throws(ProtocolError) in
            try m.start()
        }
        return try await runProtocol(started: started, unsent: firstRound, channel: &channel, leadingFrames: leadingFrames,
                                     send: send, read: read, gate: gate)
    }

    /// Runs a machine whose first round already ran (``DuoProtocolMachine/start()``) to its result;
    /// `unsent` are that round's messages not sent yet (the app's P2P messages, which need the node's ACCEPT).
    package static func runProtocol(started machine: DuoProtocolMachine, unsent: [ProtocolMessage], channel: inout DuoFrameChannel,
                                   leadingFrames: [Frame] = [],
                                   send: ([Frame]) async throws(SilentShardError) -> Void,
                                   read: () async throws(SilentShardError) -> [UInt8],
                                   gate: SessionDriver.AdvanceGate = SessionDriver.ungated) async throws(SilentShardError) -> ProtocolResult {
        var (current, out) = (machine, unsent)
        var pending = leadingFrames
        while true {
            pending += try channel.frames(for: out)
            if !pending.isEmpty { try await send(pending) }
            pending = []
            if let result = current.result { return result }
            var inputs = channel.take(tags: current.awaiting)
            while inputs == nil {
                try channel.ingest(try await read())
                inputs = channel.take(tags: current.awaiting)
            }
            let messages = inputs ?? []
            try await gate { () async throws(SilentShardError) in
                (current, out) = try await DuoCompute.step(current) { (m: inout DuoProtocolMachine) throws(ProtocolError) in
                    try m.advance(messages)
                }
            }
        }
    }

    /// Reads until a control frame of `kind` from the peer is buffered and returns it.
    package static func awaitControl(_ kind: FrameKind, channel: inout DuoFrameChannel,
                                    read: () async throws(SilentShardError) -> [UInt8]) async throws(SilentShardError) -> FrameReceiver.Received {
        while true {
            if let frame = channel.take(kind: kind) { return frame }
            try channel.ingest(try await read())
        }
    }
}
