import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import duo

/// A cheating party for ban tests: runs a duo protocol like `SessionDriver.run`, but rewrites its
/// own outgoing protocol messages *before* framing. The frames are then validly signed and encrypted:
/// this is a party misbehaving with its own keys (what AbortAndBan is for), not a network attacker.
func runCorrupting<Run: SessionRun>(_ run: Run, channel: inout PartyFrameChannel, leadingFrames: [Frame] = [],
                            corrupt: @escaping @Sendable (ProtocolMessage) -> ProtocolMessage,
                            send: ([Frame]) async throws(SilentShardError) -> Void,
                            read: SessionDriver.Read) async throws(SilentShardError) -> Run.Outcome {
    var (current, out) = try await SessionDriver.step(run) {
        (m: inout Run, rng: inout any RandomNumberGenerator) throws(ProtocolError) in
        try m.start(using: &rng).map(corrupt)
    }
    var pending = leadingFrames
    while true {
        pending += try channel.frames(for: out)
        if !pending.isEmpty { try await send(pending) }
        pending = []
        if let outcome = current.outcome { return outcome }
        var inputs = channel.take(tags: current.awaiting, from: current.awaitingSenders)
        while inputs == nil {
            try await SessionDriver.receive(channel: &channel, read: read, relay: { _ throws(SilentShardError) in })
            inputs = channel.take(tags: current.awaiting, from: current.awaitingSenders)
        }
        let messages = inputs ?? []
        (current, out) = try await SessionDriver.step(current) {
            (m: inout Run, rng: inout any RandomNumberGenerator) throws(ProtocolError) in
            try m.advance(messages, using: &rng).map(corrupt)
        }
    }
}

/// Flips one bit at `offset` of every message with `tag` (DKLs23 signing R2 at offset 300 is inside
/// ã: the receiver's multiplication check fails — `DKLsSignTests` pins that).
func flipping(tag: UInt16, offset: Int) -> @Sendable (ProtocolMessage) -> ProtocolMessage {
    { message in
        guard message.tag == tag, message.payload.indices.contains(offset) else { return message }
        var payload = message.payload
        payload[offset] ^= 0x01
        return ProtocolMessage(tag: message.tag, from: message.from, to: message.to, payload: payload)
    }
}

/// An app `NetworkClient` whose every `connect` opens an in-memory pipe and runs `serve` (a node of the
/// test's making) on the other end.
final class ScriptedNodeClient: NetworkClient, @unchecked Sendable {
    private let serve: @Sendable (PipeConnection) async -> Void
    private let state = LockedValue<(app: InMemoryNetworkClient?, node: Task<Void, Never>?)>((nil, nil))

    init(serve: @escaping @Sendable (PipeConnection) async -> Void) { self.serve = serve }

    func connect(action: NetworkAction, params: String?) async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: action, params: params)
        try await node.connect(action: action, params: params)
        let serve = self.serve
        let task = Task { await serve(PipeConnection.duo(end: node)) }
        state.withLock { $0 = (app, task) }
    }

    func send(bytes: Data) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await app.send(bytes: bytes)
    }

    func send(text: String) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await app.send(text: text)
    }

    func read() async throws -> Data {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        guard case .binary(let data) = try await app.readMessage() else { throw NetworkError.closedByPeer(code: 1000, reason: "") }
        return data
    }

    func disconnect() async throws {
        let (app, task) = state.withLock { ($0.app, $0.node) }
        try? await app?.disconnect()
        task?.cancel()
        state.withLock { $0 = (nil, nil) }
    }
}
