import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import duo

/// The node side of an in-memory pipe as a `NodeStepConnection`.
struct PipeNodeConnection: NodeStepConnection {
    let end: InMemoryNetworkClient
    func read() async throws -> Data {
        switch try await end.readMessage() {
        case .binary(let data): return data
        case .text: throw NetworkError.protocolViolation(closeCode: 1002)
        }
    }
    func send(_ data: Data) async throws { try await end.send(bytes: data) }
    /// Like a socket close: the app's pending read ends after the messages already sent (a text
    /// message stands in for the close; duo never sends text after the token).
    func close(code: UInt16, reason: String) async {
        try? await end.send(text: "close \(code)")
        try? await end.disconnect()
    }
}

/// A test `NetworkClient` for the app: each `connect` opens a fresh in-memory pipe and starts the
/// node's `NodeStepRunner` on the other end for the route the action names. `tamper` may rewrite the
/// n-th message the app reads (0-based). Reports of finished node steps are collected.
final class LoopbackDuoClient: NetworkClient, @unchecked Sendable {
    let runner: NodeStepRunner
    private let state = LockedValue<(app: InMemoryNetworkClient?, nodeEnd: InMemoryNetworkClient?, node: Task<NodeStepReport, Never>?, reads: Int,
                              reports: [NodeStepReport])>((nil, nil, nil, 0, []))
    let tamper: @Sendable (Int, Data) -> Data
    let tamperSend: @Sendable (Int, Data) -> Data
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
    /// Every message the app sent, oldest first.
    var sentMessages: [Data] { sentLog.withLock { $0 } }

    /// What the node's server would have made of the app's token and connection (nil: no verifier, no address).
    let principal: Principal?
    let clientAddress: String?

    init(runner: NodeStepRunner, tamper: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperSend: @escaping @Sendable (Int, Data) -> Data = { $1 }, principal: Principal? = nil,
         clientAddress: String? = nil) {
        self.runner = runner
        self.tamper = tamper
        self.tamperSend = tamperSend
        self.principal = principal
        self.clientAddress = clientAddress
    }

    var reports: [NodeStepReport] { state.withLock { $0.reports } }

    func connect(action: NetworkAction, params: String?) async throws {
        let (app, node) = InMemoryNetworkClient.pair()
        try await app.connect(action: action, params: params)
        try await node.connect(action: action, params: params)
        let algorithm: SessionAlgorithm = action.algorithm == "eddsa" ? .eddsa : .ecdsa
        // The node server's own mapping from a route's action to an operation.
        let operation = NodeStepHandler.operation(action.action) ?? .import
        let route = NodeStepRoute(algorithm: algorithm, operation: operation, params: params)
        let runner = self.runner
        let (principal, clientAddress) = (principal, clientAddress)
        let task = Task {
            await runner.run(connection: PipeNodeConnection(end: node), route: route, principal: principal,
                             clientAddress: clientAddress)
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
        try await app.send(bytes: tamperSend(index, bytes))
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

    /// preSignFinal / PRESIG_QUERY over "HTTP": the node's answer to the body.
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
        try? await app?.disconnect()
        // Like a socket close reaching the node after the messages in flight: a node still waiting
        // for a frame after a grace period sees its read fail.
        let closer = Task {
            guard (try? await Task.sleep(for: .milliseconds(300))) != nil else { return }
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

/// Where a test cuts the app's connection: before its n-th send or read on one connection.
enum CutPoint: Sendable, Equatable {
    case send(Int)
    case read(Int)
}

/// A storage client that records every write (to check staged → current).
final class RecordingStorage: StorageClient {
    let inner = InMemoryStorageClient()
    private let log = LockedValue<[KeyshareRecord]>([])
    /// Makes this many of the next promote writes (a record with a current share and nothing staged) fail.
    let failPromotes = LockedValue(0)
    var writes: [KeyshareRecord] { log.withLock { $0 } }
    func read(keyId: String) async throws -> KeyshareRecord? { try await inner.read(keyId: keyId) }
    func write(_ record: KeyshareRecord) async throws {
        if record.staged == nil, record.current != nil,
           failPromotes.withLock({ count in defer { count = max(0, count - 1) }; return count > 0 }) {
            throw StorageError.io(operation: "write", errno: 5)
        }
        log.withLock { $0.append(record) }
        try await inner.write(record)
    }
    func delete(keyId: String) async throws { try await inner.delete(keyId: keyId) }
}

/// One node (key, store, runner) and an app session wired to it, all on one `ManualClock`: the SETUP
/// timestamps, the replay store and the leases see the time the test sets, however long the machine
/// takes between two steps.
struct DuoFixture {
    let nodeKey: Ed25519.SigningKey
    let store: NodeShareStore
    let runner: NodeStepRunner
    let storage = RecordingStorage()
    let client: LoopbackDuoClient
    let session: DuoSession
    let signer = SoftwareEd25519MessageSigner()
    let clock: ManualClock
    /// How the app's step deadline waits.
    let deadlines: AppDeadlines
    /// The node store's SQLite file (tests that tamper with the database).
    let storePath: String

    init(algorithm: Keyshare.Algorithm, cloudKeyOverride: String? = nil,
         tamper: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperSend: @escaping @Sendable (Int, Data) -> Data = { $1 }, rateLimiter: NodeRateLimiter? = nil,
         clock: ManualClock = ManualClock(), deadlines: AppDeadlines = .system,
         masterKey: NodeMasterKey = .random(), storeLocation: NodeStoreLocation? = nil) throws {
        self.clock = clock
        self.deadlines = deadlines
        nodeKey = Ed25519.SigningKey()
        let directory = NSTemporaryDirectory() + "silentshard-duo-tests-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        storePath = directory + "/node.sqlite"
        store = try NodeShareStore(location: storeLocation ?? .sqlite(path: storePath), masterKey: masterKey, clock: clock.date)
        runner = NodeStepRunner(nodeKey: nodeKey, store: store, replayWindow: try ReplayWindow(), clock: clock.read,
                               rateLimiter: rateLimiter)
        client = LoopbackDuoClient(runner: runner, tamper: tamper, tamperSend: tamperSend)
        let cloudKey = cloudKeyOverride ?? Hex.encode(nodeKey.verifyingKey.bytes)
        session = Self.session(algorithm, signer: signer, cloudKey: cloudKey, storage: storage, client: client, clock: clock,
                               deadlines: deadlines)
    }

    /// Another app session on this fixture's clock: another device (`signer`), storage or client.
    func session(_ algorithm: Keyshare.Algorithm, signer: any MessageSigner = SoftwareEd25519MessageSigner(),
                 storage: any StorageClient = InMemoryStorageClient(), client: (any NetworkClient)? = nil) -> DuoSession {
        Self.session(algorithm, signer: signer, cloudKey: Hex.encode(nodeKey.verifyingKey.bytes), storage: storage,
                     client: client ?? self.client, clock: clock, deadlines: deadlines)
    }

    private static func session(_ algorithm: Keyshare.Algorithm, signer: any MessageSigner, cloudKey: String,
                                storage: any StorageClient, client: any NetworkClient, clock: ManualClock,
                                deadlines: AppDeadlines) -> DuoSession {
        DuoSession(algorithm: algorithm, messageSigner: signer, cloudVerifyingKey: cloudKey, storageClient: storage,
                   networkClient: client,
                   actionProvider: algorithm == .ecdsa ? DuoECDSANetworkActions() as any DuoNetworkActionProvider
                                                       : DuoEdDSANetworkActions(),
                   deviceClock: clock.read, deadlines: deadlines)
    }
}
