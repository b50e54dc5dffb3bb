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

    func read() async throws -> Data {
        switch try await end.readMessage() {
        case .binary(let data): return data
        case .text: throw NetworkError.closedByPeer(code: 1000, reason: "")
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

/// Node A's link to node B in process: each `openLink` starts B's `serveLink` on a fresh pipe.
/// `down` makes every open fail (B unreachable); `tamperToB` rewrites messages A sends on the link
/// (a misbehaving relay); `dropAfter` closes the link after A sent that many messages (B dies).
final class InProcessPeer: TrioPeerConnector, @unchecked Sendable {
    let runner: LockedValue<NodeStepRunner?> = LockedValue(nil)
    let down = LockedValue(false)
    /// B's end of the link is open but nobody answers.
    let silent = LockedValue(false)
    private let silentEnds = LockedValue<[InMemoryNetworkClient]>([])
    /// The link dies after A sent this many messages on it (B crashes mid-session).
    let dieAfter = LockedValue<Int?>(nil)
    let tamperToB: @Sendable (Int, Data) -> Data
    private let tasks = LockedValue<[Task<NodeStepReport, Never>]>([])

    /// Rewrites messages B sends A on the link.
    let tamperToA: @Sendable (Int, Data) -> Data
    /// Cuts (or delays) the link before a chosen message.
    let cutter = LinkCutter()

    init(tamperToB: @escaping @Sendable (Int, Data) -> Data = { $1 }, tamperToA: @escaping @Sendable (Int, Data) -> Data = { $1 }) {
        self.tamperToB = tamperToB
        self.tamperToA = tamperToA
    }

    func openLink() async throws -> any NodeStepConnection {
        guard !down.withLock({ $0 }), let runner = runner.withLock({ $0 }) else { throw NetworkError.connectionFailed(reason: "B down") }
        let (a, b) = InMemoryNetworkClient.pair()
        try await a.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        try await b.connect(action: TrioAction.ECDSA.Keygen(), params: nil)
        if silent.withLock({ $0 }) {
            // B accepts the connection but never answers (hung process).
            silentEnds.withLock { $0.append(b) }
        } else {
            let toA = PipeConnection(end: b, tamper: tamperToA, other: a, cutter: cutter, direction: .bToA)
            let task = Task { await runner.serveLink(connection: toA) }
            tasks.withLock { $0.append(task) }
        }
        return PipeConnection(end: a, tamper: tamperToB, dieAfter: dieAfter.withLock { $0 }, other: b, cutter: cutter,
                              direction: .aToB)
    }

    /// B's reports of every link served so far (waits for running ones).
    func reports() async -> [NodeStepReport] {
        var out: [NodeStepReport] = []
        for task in tasks.withLock({ $0 }) { out.append(await task.value) }
        return out
    }
}

/// The app's `NetworkClient`: each `connect` opens a pipe and starts node A's runner on it for the
/// route the action names. `tamper` may rewrite the n-th message the app reads.
final class LoopbackTrioClient: NetworkClient, @unchecked Sendable {
    let runner: NodeStepRunner
    let tamper: @Sendable (Int, Data) -> Data
    /// Makes a send fail (the connection drops) when it returns true for the outgoing message.
    let failSend = LockedValue<(@Sendable (Data) -> Bool)?>(nil)
    /// Rewrites an outgoing message (a misbehaving app or a path attacker).
    let rewriteSend = LockedValue<(@Sendable (Data) -> Data)?>(nil)
    /// Cuts the app's link before a chosen message of the app or of A (share it with the peer's to
    /// count every link in one place).
    let cutter: LinkCutter
    private let state = LockedValue<(app: InMemoryNetworkClient?, nodeEnd: InMemoryNetworkClient?, node: Task<NodeStepReport, Never>?,
                              reads: Int, reports: [NodeStepReport])>((nil, nil, nil, 0, []))

    init(runner: NodeStepRunner, cutter: LinkCutter = LinkCutter(), tamper: @escaping @Sendable (Int, Data) -> Data = { $1 }) {
        self.runner = runner
        self.cutter = cutter
        self.tamper = tamper
    }

    /// Node A's reports, one per finished step.
    var reports: [NodeStepReport] { state.withLock { $0.reports } }
    private let hookBox = LockedValue<(@Sendable (CutPoint) async throws -> Void)?>(nil)
    private let sendsOnConnection = LockedValue(0)
    private let sentLog = LockedValue<[Data]>([])
    /// Every message the app sent, oldest first.
    var sentMessages: [Data] { sentLog.withLock { $0 } }
    /// Runs `hook` before the app's send or read at each point of a connection (e.g. cancels the
    /// operation's task). nil disarms.
    func armHook(_ hook: (@Sendable (CutPoint) async throws -> Void)?) { hookBox.withLock { $0 = hook } }

    func connect(action: NetworkAction, params: String?) async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: action, params: params)
        try await node.connect(action: action, params: params)
        let algorithm: SessionAlgorithm = action.algorithm == "eddsa" ? .eddsa : .ecdsa
        let operation = NodeStepHandler.operation(action.action) ?? .keygen
        let route = NodeStepRoute(algorithm: algorithm, operation: operation, params: params)
        let runner = self.runner
        let nodeSide = PipeConnection(end: node, other: app, cutter: cutter, direction: .aToApp)
        let task = Task { await runner.run(connection: nodeSide, route: route) }
        state.withLock { $0 = (app, node, task, 0, $0.reports) }
        sendsOnConnection.withLock { $0 = 0 }
    }

    func send(bytes: Data) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        let index = sendsOnConnection.withLock { n in
            defer { n += 1 }
            return n
        }
        try await hookBox.withLock { $0 }?(.send(index))
        // Like the socket clients: a cancelled task's send fails.
        try Task.checkCancellation()
        sentLog.withLock { $0.append(bytes) }
        if cutter.shouldCut(.appToA) {
            await LinkCutter.cut(app, state.withLock { $0.nodeEnd })
            throw NetworkError.connectionLost
        }
        let bytes = cutter.rewrite(.appToA, bytes)
        if let failSend = failSend.withLock({ $0 }), failSend(bytes) { throw NetworkError.connectionLost }
        let rewritten = rewriteSend.withLock({ $0 }).map { $0(bytes) } ?? bytes
        try await app.send(bytes: rewritten)
    }

    func send(text: String) async throws {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await app.send(text: text)
    }

    func read() async throws -> Data {
        guard let app = state.withLock({ $0.app }) else { throw NetworkError.notConnected }
        try await hookBox.withLock { $0 }?(.read(state.withLock { $0.reads }))
        guard case .binary(let data) = try await app.readMessage() else { throw NetworkError.closedByPeer(code: 1000, reason: "") }
        let index = state.withLock { s in
            defer { s.reads += 1 }
            return s.reads
        }
        return tamper(index, data)
    }

    /// preSignFinal over "HTTP": node A's answer to the body (B's through A's purpose-2 link).
    func sendPostRequest(action: NetworkAction, params: String?, body: Data) async throws -> Data {
        let algorithm: SessionAlgorithm = action.algorithm == "eddsa" ? .eddsa : .ecdsa
        guard let answer = await runner.preSignFinal(body: [UInt8](body), token: nil, principal: nil, algorithm: algorithm) else {
            throw NetworkError.httpStatus(400)
        }
        return Data(answer)
    }

    func disconnect() async throws {
        let (app, nodeEnd, task) = state.withLock { ($0.app, $0.nodeEnd, $0.node) }
        // The app's close reaches node A after what is in flight.
        try? await app?.send(text: "close")
        try? await app?.disconnect()
        let closer = Task {
            guard (try? await Task.sleep(for: .milliseconds(300))) != nil else { return }
            try? await nodeEnd?.send(text: "close")
            try? await nodeEnd?.disconnect()
        }
        let finished = await task?.value
        closer.cancel()
        if let report = finished { state.withLock { $0.reports.append(report) } }
        state.withLock { $0.app = nil; $0.nodeEnd = nil; $0.node = nil }
    }
}

/// A storage client that records every write (to check staged → current).
final class RecordingStorage: StorageClient {
    let inner = InMemoryStorageClient()
    private let log = LockedValue<[KeyshareRecord]>([])
    /// Makes every write fail (a full disk).
    let failWrites = LockedValue(false)
    /// Makes this many of the next promote writes (staged → current: a record with a current share and
    /// nothing staged) fail.
    let failPromotes = LockedValue(0)
    var writes: [KeyshareRecord] { log.withLock { $0 } }
    func read(keyId: String) async throws -> KeyshareRecord? { try await inner.read(keyId: keyId) }
    func write(_ record: KeyshareRecord) async throws {
        if failWrites.withLock({ $0 }) { throw StorageError.io(operation: "write", errno: 28) }
        if record.staged == nil, record.current != nil,
           failPromotes.withLock({ count in defer { count = max(0, count - 1) }; return count > 0 }) {
            throw StorageError.io(operation: "write", errno: 5)
        }
        log.withLock { $0.append(record) }
        try await inner.write(record)
    }
    func delete(keyId: String) async throws { try await inner.delete(keyId: keyId) }
}

/// A trio cluster in process: the offline cluster key, nodes A and B (own keys, certificates,
/// databases, runners), A's link to B, and an app session wired to A, all on one `ManualClock` (SETUP
/// timestamps, replay windows, leases and presignature expiry see the time the test sets).
struct TrioFixture {
    let clusterKey = Ed25519.SigningKey()
    let groupID = SecureRandom.bytes(count: 16)
    let storeA: NodeShareStore
    let storeB: NodeShareStore
    let identityA: TrioNodeIdentity
    let identityB: TrioNodeIdentity
    let runnerA: NodeStepRunner
    let runnerB: NodeStepRunner
    let peer: InProcessPeer
    let client: LoopbackTrioClient
    let storage = RecordingStorage()
    let session: TrioSession
    /// The app's device key (a second session with the same device can be made, e.g. for recovery).
    let signer = SoftwareEd25519MessageSigner()
    let clock: ManualClock

    static func certificate(_ role: NodeCertificate.Role, key: Ed25519.SigningKey, group: [UInt8],
                            issuer: Ed25519.SigningKey) -> NodeCertificate {
        let now = UInt64(Date().timeIntervalSince1970)
        // Valid a day back, so a test may set the nodes' clocks behind the app's (clock-skew tests).
        return NodeCertificate(role: role, groupID: group, nodeKey: key.verifyingKey, notBefore: now - 86_400,
                               notAfter: now + 86_400 * 30, serial: 1, issuer: issuer)
    }

    static func store(clock: ManualClock) throws -> NodeShareStore {
        let directory = NSTemporaryDirectory() + "silentshard-trio-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try NodeShareStore(path: directory + "/node.sqlite", masterKey: .random(), clock: clock.date)
    }

    /// - Parameters:
    ///   - cloudKeyOverride: the app's `cloudVerifyingKey` (default: the cluster key).
    ///   - groupB: B's certificate group (default: the same as A's).
    ///   - tamperAppReads: rewrites the n-th message the app reads.
    ///   - tamperToB: rewrites the n-th message A sends to B.
    init(algorithm: Keyshare.Algorithm, cloudKeyOverride: String? = nil, groupB: [UInt8]? = nil,
         tamperAppReads: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperToB: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperToA: @escaping @Sendable (Int, Data) -> Data = { $1 },
         frameTimeout: Duration = .seconds(30), rateLimiterA: NodeRateLimiter? = nil,
         rateLimiterB: NodeRateLimiter? = nil, clock: ManualClock = ManualClock(),
         nodesAheadBy nodeClockOffset: Int64 = 0, deadlinesA: DeadlineSwitch? = nil) throws {
        self.clock = clock
        let keyA = Ed25519.SigningKey(), keyB = Ed25519.SigningKey()
        identityA = try TrioNodeIdentity(nodeKey: keyA, certificate: Self.certificate(.trioA, key: keyA, group: groupID,
                                                                                          issuer: clusterKey),
                                             clusterKey: clusterKey.verifyingKey)
        identityB = try TrioNodeIdentity(nodeKey: keyB, certificate: Self.certificate(.trioB, key: keyB, group: groupB ?? groupID,
                                                                                          issuer: clusterKey),
                                             clusterKey: clusterKey.verifyingKey)
        storeA = try Self.store(clock: clock)
        storeB = try Self.store(clock: clock)
        peer = InProcessPeer(tamperToB: tamperToB, tamperToA: tamperToA)
        // The nodes' clock: the fixture's, shifted by `nodesAheadBy` ms (clock-skew tests).
        let nodeClock: @Sendable () -> UInt64 = { UInt64(clamping: Int64(clamping: clock.milliseconds) + nodeClockOffset) }
        runnerA = NodeStepRunner(identity: identityA, store: storeA, peer: peer, replayWindow: try ReplayWindow(),
                                 clock: nodeClock, frameTimeout: frameTimeout, deadlines: deadlinesA?.deadlines ?? .system,
                                 rateLimiter: rateLimiterA)
        runnerB = NodeStepRunner(identity: identityB, store: storeB, peer: nil, replayWindow: try ReplayWindow(),
                                 clock: nodeClock, frameTimeout: frameTimeout, rateLimiter: rateLimiterB)
        client = LoopbackTrioClient(runner: runnerA, cutter: peer.cutter, tamper: tamperAppReads)
        let b = runnerB
        peer.runner.withLock { $0 = b }
        let cloudKey = cloudKeyOverride ?? Hex.encode(clusterKey.verifyingKey.bytes)
        session = Self.session(algorithm, signer: signer, cloudKey: cloudKey, storage: storage, client: client, clock: clock)
    }

    /// Another app session on this fixture's clock: another device (`signer`), storage or client.
    func session(_ algorithm: Keyshare.Algorithm, signer: (any MessageSigner)? = nil,
                 storage: any StorageClient = RecordingStorage(), client: (any NetworkClient)? = nil) -> TrioSession {
        Self.session(algorithm, signer: signer ?? self.signer, cloudKey: Hex.encode(clusterKey.verifyingKey.bytes),
                     storage: storage, client: client ?? self.client, clock: clock)
    }

    private static func session(_ algorithm: Keyshare.Algorithm, signer: any MessageSigner, cloudKey: String,
                                storage: any StorageClient, client: any NetworkClient, clock: ManualClock) -> TrioSession {
        TrioSession(algorithm: algorithm, messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                    networkClient: client,
                    actionProvider: algorithm == .ecdsa ? TrioECDSANetworkActions() as any TrioNetworkActionProvider
                                                        : TrioEdDSANetworkActions(),
                    deviceClock: clock.read)
    }
}

/// Verifies with libsecp256k1 under the keyshare's root key, and by public key recovery.
func verifyECDSA(_ signature: Signature, hash: Data, keyshare: Keyshare) throws -> Bool {
    let key = try Secp256k1.Point(compressed: [UInt8](keyshare.publicKey))
    guard let r = signature.r, let s = signature.s, let v = signature.recoveryId else { return false }
    let raw = try Secp256k1.ECDSASignature(r: [UInt8](r), s: [UInt8](s), recoveryId: v)
    let recovered = try Secp256k1.ECDSA.recoverPublicKey(raw, hash: [UInt8](hash))
    return Secp256k1.ECDSA.verify(raw, hash: [UInt8](hash), publicKey: key) && recovered == key
}

/// Verifies with libsodium (strict `crypto_sign_verify_detached`) under the keyshare's root key.
func verifyEdDSA(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
    let key = try Ed25519.VerifyingKey(bytes: [UInt8](keyshare.publicKey))
    return key.isValidSignature([UInt8](signature.rawRepresentation), for: [UInt8](message))
}

func verify(_ signature: Signature, message: Data, keyshare: Keyshare) throws -> Bool {
    keyshare.algorithm == .ecdsa ? try verifyECDSA(signature, hash: message, keyshare: keyshare)
                                 : try verifyEdDSA(signature, message: message, keyshare: keyshare)
}

func testMessage(_ algorithm: Keyshare.Algorithm, _ text: String) -> Data {
    algorithm == .ecdsa ? Data(SHA256.hash(Array(text.utf8))) : Data(text.utf8)
}

/// Where a test interrupts the app's connection: before its n-th send or read on one connection.
enum CutPoint: Sendable, Equatable {
    case send(Int)
    case read(Int)
}
