import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import trio

/// A node's side of an in-memory pipe as a `NodeStepConnection`. `tamper` may rewrite the n-th
/// message this end sends (0-based).
struct PipeConnection: NodeStepConnection {
    let end: InMemoryNetworkClient
    var tamper: @Sendable (Int, Data) -> Data = { $1 }
    /// After this many sends, the link dies (both ends closed) instead of sending.
    var dieAfter: Int?
    var other: InMemoryNetworkClient?
    let sent = Counter()
    /// Counts this end's sends in `direction` and cuts the link where the plan says.
    var cutter: LinkCutter?
    var direction: LinkDirection = .aToApp
    /// What a text message read on this end means: trio's pipes stand a text message in for the peer's
    /// close; duo's app never sends text after the token, so there it is a protocol violation.
    var textError: NetworkError = .closedByPeer(code: 1000, reason: "")

    /// The duo node's end of the app's pipe.
    static func duo(end: InMemoryNetworkClient, other: InMemoryNetworkClient? = nil, cutter: LinkCutter? = nil) -> PipeConnection {
        PipeConnection(end: end, other: other, cutter: cutter, textError: .protocolViolation(closeCode: 1002))
    }

    func read() async throws -> Data {
        switch try await end.readMessage() {
        case .binary(let data): return data
        case .text: throw textError
        }
    }
    func send(_ data: Data) async throws {
        let index = sent.next()
        if let cutter, cutter.shouldCut(direction) {
            await LinkCutter.cut(end, other)
            throw NetworkError.connectionLost
        }
        if let hold = cutter?.lateHold(direction) { await hold() }
        let data = cutter?.rewrite(direction, data) ?? data
        if let dieAfter, index >= dieAfter {
            try? await other?.send(text: "died")
            try? await other?.disconnect()
            await close(code: 1006, reason: "died")
            throw NetworkError.connectionLost
        }
        try await end.send(bytes: tamper(index, data))
    }
    /// Like a socket close: the peer's pending read ends after the messages already sent (a text
    /// message stands in for the close frame).
    func close(code: UInt16, reason: String) async {
        try? await end.send(text: "close \(code)")
        try? await end.disconnect()
    }
}

/// One direction of one trio link, named by its sender.
enum LinkDirection: String, CaseIterable, Sendable {
    case appToA, aToApp, aToB, bToA
}

/// A node's deadlines in a test: the real ones until `expire()`; from then on every deadline, pending
/// or new, has passed at once — "a peer slower than the node's deadline" without racing the machine's
/// speed (`TrioFaultTests.slowNodeB`).
final class DeadlineSwitch: Sendable {
    private let state = LockedValue((expired: false, timeouts: 0))

    var deadlines: NodeDeadlines {
        NodeDeadlines(sleep: { [self] duration in try await sleep(duration) },
                      expired: { [self] in state.withLock { $0.timeouts += 1 } })
    }

    private func sleep(_ duration: Duration) async throws {
        let clock = ContinuousClock(), end = clock.now.advanced(by: duration)
        while !state.withLock({ $0.expired }) {
            let now = clock.now
            guard now < end else { return }
            try await Task.sleep(for: min(.milliseconds(20), end - now))
        }
    }

    /// Every deadline of the node has passed, from now on.
    func expire() { state.withLock { $0.expired = true } }

    /// Waits until one of the node's steps saw a deadline pass (it then fails with `timeout`).
    func awaitTimeout() async {
        while state.withLock({ $0.timeouts }) == 0 { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// Back to the real deadlines.
    func reset() { state.withLock { $0 = (false, 0) } }
}

/// Counts every message sent per direction (over all connections) and, when armed, cuts the link
/// before the n-th message of one direction (once): both ends are closed, as a lost TCP connection
/// reaches both sides; what was sent before stays readable. May also hold one message back until the
/// receiver's deadline passed (a peer slower than the deadline).
final class LinkCutter: Sendable {
    private struct State {
        var counts: [LinkDirection: Int] = [:]
        var target: (LinkDirection, Int)?
        var fired = false
        var late: (direction: LinkDirection, index: Int, hold: @Sendable () async -> Void)?
    }
    private let state = LockedValue(State())

    /// Messages sent per direction since the last `reset`.
    var counts: [LinkDirection: Int] { state.withLock { $0.counts } }
    var fired: Bool { state.withLock { $0.fired } }

    /// Zeroes the counters and arms (or, with nil, disarms) a cut before message `index` of `direction`;
    /// `late`: the sender of message `index` of `direction` runs `hold` (e.g. until the receiver's deadline
    /// passed) before it sends it.
    func reset(cut target: (LinkDirection, Int)? = nil,
               late: (direction: LinkDirection, index: Int, hold: @Sendable () async -> Void)? = nil) {
        state.withLock { $0 = State(counts: [:], target: target, fired: false, late: late) }
    }

    /// Counts one message of `direction`; true when the link must be cut instead of sending it.
    func shouldCut(_ direction: LinkDirection) -> Bool {
        state.withLock { s in
            let index = s.counts[direction, default: 0]
            s.counts[direction] = index + 1
            guard !s.fired, let target = s.target, target.0 == direction, target.1 == index else { return false }
            s.fired = true
            return true
        }
    }

    private let rewriter = LockedValue<(@Sendable (LinkDirection, Int, Data) -> Data)?>(nil)

    /// Sees (and may replace) every message after it is counted: `(direction, index, bytes)`.
    func setRewrite(_ rewrite: (@Sendable (LinkDirection, Int, Data) -> Data)?) { rewriter.withLock { $0 = rewrite } }

    /// The message just counted in `direction`, as the rewrite hook returns it.
    func rewrite(_ direction: LinkDirection, _ data: Data) -> Data {
        guard let rewrite = rewriter.withLock({ $0 }) else { return data }
        let index = state.withLock { $0.counts[direction, default: 1] - 1 }
        return rewrite(direction, index, data)
    }

    /// What to wait for before sending the message just counted, if it is the late one.
    func lateHold(_ direction: LinkDirection) -> (@Sendable () async -> Void)? {
        state.withLock { s in
            guard let late = s.late, late.direction == direction, s.counts[direction, default: 0] - 1 == late.index else { return nil }
            return late.hold
        }
    }

    /// Closes both ends of a pipe: each side's pending and later reads end after what was already sent.
    static func cut(_ end: InMemoryNetworkClient, _ other: InMemoryNetworkClient?) async {
        try? await end.send(text: "cut")
        try? await other?.send(text: "cut")
        try? await end.disconnect()
        try? await other?.disconnect()
    }
}

final class Counter: Sendable {
    private let value = LockedValue(0)
    func next() -> Int { value.withLock { v in defer { v += 1 }; return v } }
}
