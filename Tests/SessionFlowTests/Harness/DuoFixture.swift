import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import duo

/// Duo's deployment for `SessionFixture` (and the duo-only suites): one node (key, store, runner) and an app
/// session wired to it, all on one `ManualClock`: the SETUP
/// timestamps, the replay store and the leases see the time the test sets, however long the machine
/// takes between two steps.
struct DuoFixture {
    let nodeKey: Ed25519.SigningKey
    let store: NodeShareStore
    let runner: NodeStepRunner
    let storage = RecordingStorage()
    let client: LoopbackClient
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
        client = LoopbackClient(mode: .duo, runner: runner, tamper: tamper, tamperSend: tamperSend)
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
