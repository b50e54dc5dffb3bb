import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport

/// The app's `NetworkClient` in process, for either mode: each `connect` opens a fresh in-memory pipe
/// and starts the entry node's `NodeStepRunner` (duo: the node; trio: node A) on the other end for the
/// route the action names. Reports of finished node steps are collected.
///
/// Faults on the app's link: `tamper` rewrites the n-th message the app reads, `tamperSend` the n-th it
/// sends (0-based, per connection); `armCut` cuts before a chosen send or read; `armHook` runs code
/// there (cancel, hold); `cutter` counts (and may cut or rewrite) messages per `LinkDirection`, shared
/// with a trio peer so that every link is counted in one place; `failSend` and `rewriteSend` act on
/// outgoing messages by content.
class LoopbackClient: NetworkClient, @unchecked Sendable {
    let mode: Keyshare.Mode
    let runner: NodeStepRunner
    private let state = LockedValue<(app: InMemoryNetworkClient?, nodeEnd: InMemoryNetworkClient?, node: Task<NodeStepReport, Never>?, reads: Int,
                              reports: [NodeStepReport])>((nil, nil, nil, 0, []))
    let tamper: @Sendable (Int, Data) -> Data
    let tamperSend: @Sendable (Int, Data) -> Data
    /// Counts the app link's messages (`appToA`, `aToApp`) and cuts or rewrites where armed.
    let cutter: LinkCutter
    /// Makes a send fail (the connection drops) when it returns true for the outgoing message.
    let failSend = LockedValue<(@Sendable (Data) -> Bool)?>(nil)
    /// Rewrites an outgoing message (a misbehaving app or a path attacker).
    let rewriteSend = LockedValue<(@Sendable (Data) -> Data)?>(nil)
    private let cutRule = LockedValue<(@Sendable (CutPoint) -> Bool)?>(nil)
    /// Cuts the connection (both ends closed, the call throws `connectionLost`) before the app's send
    /// or read with this per-connection index, when `rule` returns true. nil disarms.
    func armCut(_ rule: (@Sendable (CutPoint) -> Bool)?) { cutRule.withLock { $0 = rule } }
    private func cut(_ point: CutPoint) -> Bool { cutRule.withLock { $0 }?(point) ?? false }
    private let hookBox = LockedValue<(@Sendable (CutPoint) async throws -> Void)?>(nil)
    /// Runs `hook` before the app's send or read at each point (e.g. cancels the operation's task, or
    /// holds the read until the step's deadline cancels it). nil disarms.
    func armHook(_ hook: (@Sendable (CutPoint) async throws -> Void)?) { hookBox.withLock { $0 = hook } }
    private let sends = LockedValue(0)
    private let sentLog = LockedValue<[Data]>([])
    /// Every message the app sent, oldest first (as the app sent it, before any fault).
    var sentMessages: [Data] { sentLog.withLock { $0 } }

    /// What the node's server would have made of the app's token and connection (nil: no verifier, no address).
    let principal: Principal?
    let clientAddress: String?

    init(mode: Keyshare.Mode, runner: NodeStepRunner, cutter: LinkCutter = LinkCutter(),
         tamper: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperSend: @escaping @Sendable (Int, Data) -> Data = { $1 }, principal: Principal? = nil,
         clientAddress: String? = nil) {
        self.mode = mode
        self.runner = runner
        self.cutter = cutter
        self.tamper = tamper
        self.tamperSend = tamperSend
        self.principal = principal
        self.clientAddress = clientAddress
    }

    /// The entry node's reports, one per finished step.
    var reports: [NodeStepReport] { state.withLock { $0.reports } }

    func connect(action: NetworkAction, params: String?) async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: action, params: params)
        try await node.connect(action: action, params: params)
        let algorithm: SessionAlgorithm = action.algorithm == "eddsa" ? .eddsa : .ecdsa
        // The node server's own mapping from a route's action to an operation.
        let operation = NodeStepHandler.operation(action.action) ?? (mode == .duo ? .import : .keygen)
        let route = NodeStepRoute(algorithm: algorithm, operation: operation, params: params)
        let runner = self.runner
        let (principal, clientAddress) = (principal, clientAddress)
        let nodeSide = mode == .duo ? PipeConnection.duo(end: node, other: app, cutter: cutter)
                                    : PipeConnection(end: node, other: app, cutter: cutter, direction: .aToApp)
        let task = Task {
            await runner.run(connection: nodeSide, route: route, principal: principal, clientAddress: clientAddress)
        }
        state.withLock { $0 = (app, node, task, 0, $0.reports) }
        sends.withLock { $0 = 0 }
    }

    func send(bytes: Data) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        let index = sends.withLock { n in
            defer { n += 1 }
            return n
        }
        try await hookBox.withLock { $0 }?(.send(index))
        // Like the socket clients: a cancelled task's send fails.
        try Task.checkCancellation()
        if cut(.send(index)) { try await cutConnection() }
        sentLog.withLock { $0.append(bytes) }
        if cutter.shouldCut(.appToA) {
            await LinkCutter.cut(app, state.withLock { $0.nodeEnd })
            throw NetworkError.connectionLost
        }
        let bytes = cutter.rewrite(.appToA, bytes)
        if let failSend = failSend.withLock({ $0 }), failSend(bytes) { throw NetworkError.connectionLost }
        let rewritten = rewriteSend.withLock({ $0 }).map { $0(bytes) } ?? bytes
        try await app.send(bytes: tamperSend(index, rewritten))
    }

    func send(text: String) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await app.send(text: text)
    }

    func read() async throws -> Data {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        let upcoming = state.withLock { $0.reads }
        try await hookBox.withLock { $0 }?(.read(upcoming))
        if cut(.read(upcoming)) { try await cutConnection() }
        guard case .binary(let data) = try await app.readMessage() else { throw NetworkError.closedByPeer(code: 1000, reason: "") }
        let index = state.withLock { s in
            defer { s.reads += 1 }
            return s.reads
        }
        return tamper(index, data)
    }

    /// A dropped connection: both pipe ends close, as a lost TCP connection reaches both sides.
    private func cutConnection() async throws -> Never {
        let (app, nodeEnd) = state.withLock { ($0.app, $0.nodeEnd) }
        try? await app?.disconnect()
        try? await nodeEnd?.disconnect()
        throw NetworkError.connectionLost
    }

    /// preSignFinal / PRESIG_QUERY over "HTTP": the entry node's answer to the body (trio: B's through A's
    /// purpose-2 link).
    func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        let algorithm: SessionAlgorithm = action.algorithm == "eddsa" ? .eddsa : .ecdsa
        guard let answer = await runner.preSignFinal(body: [UInt8](body), token: nil, principal: principal, algorithm: algorithm,
                                                     clientAddress: clientAddress) else {
            throw NetworkError.httpStatus(400)
        }
        return Data(answer)
    }

    func disconnect() async throws {
        let (app, nodeEnd, task) = state.withLock { ($0.app, $0.nodeEnd, $0.node) }
        // The app's close reaches the node after what is in flight (trio's node reads the close as text; duo
        // sends no text after the token).
        if mode == .trio { try? await app?.send(text: "close") }
        try? await app?.disconnect()
        // Like a socket close reaching the node after the messages in flight: a node still waiting
        // for a frame after a grace period sees its read fail.
        let mode = self.mode
        let closer = Task {
            guard (try? await Task.sleep(for: .milliseconds(300))) != nil else { return }
            if mode == .trio { try? await nodeEnd?.send(text: "close") }
            try? await nodeEnd?.disconnect()
        }
        let finished = await task?.value
        closer.cancel()
        if let report = finished {
            state.withLock { $0.reports.append(report) }
        }
        state.withLock { $0.app = nil; $0.nodeEnd = nil; $0.node = nil }
    }
}

/// Where a test cuts or interrupts the app's connection: before its n-th send or read on one connection.
enum CutPoint: Sendable, Equatable {
    case send(Int)
    case read(Int)
}
