import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import trio

/// Trio's deployment for `SessionFixture` (and the trio-only suites): a cluster in process: the offline cluster key, nodes A and B (own keys, certificates,
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
    let client: LoopbackClient
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
    ///   - tamperAppSends: rewrites the n-th message the app sends (per connection).
    ///   - tamperToB: rewrites the n-th message A sends to B.
    init(algorithm: Keyshare.Algorithm, cloudKeyOverride: String? = nil, groupB: [UInt8]? = nil,
         tamperAppReads: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperAppSends: @escaping @Sendable (Int, Data) -> Data = { $1 },
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
        client = LoopbackClient(mode: .trio, runner: runnerA, cutter: peer.cutter, tamper: tamperAppReads,
                                tamperSend: tamperAppSends)
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

