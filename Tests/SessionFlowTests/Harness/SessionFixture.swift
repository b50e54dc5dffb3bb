import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import duo
import trio

/// The session harness of every mode: an app session and its node(s) in process, all on one
/// `ManualClock`, for `mode` — duo: the app and one node (`DuoFixture`); trio: the app, nodes A and B
/// and A's link to B (`TrioFixture`). Both share the app's link (`LoopbackClient`: tamper, cut, hook,
/// count), the recording storage and the node stores; trio adds the A–B link's faults
/// (`trio.peer`, `LinkCutter`). Suites that assert one behaviour in both modes take a `Keyshare.Mode`
/// argument and make one of these; the mode-only suites (duo export, trio's link faults) use the mode's
/// deployment directly.
struct SessionFixture {
    enum Deployment {
        case duo(DuoFixture)
        case trio(TrioFixture)
    }

    let deployment: Deployment

    /// A fixture over a deployment made by hand (e.g. a trio cluster with a tampered A–B link).
    init(deployment: Deployment) { self.deployment = deployment }

    /// - Parameters:
    ///   - cloudKeyOverride: the app's `cloudVerifyingKey` (default: duo's node key, trio's cluster key).
    ///   - tamperAppReads: rewrites the n-th message the app reads (per connection).
    ///   - tamperAppSends: rewrites the n-th message the app sends (per connection).
    ///   - rateLimiterA: the entry node's limiter (duo: the node's; trio: A's).
    ///   - rateLimiterB: trio: B's limiter (ignored in duo).
    init(mode: Keyshare.Mode, algorithm: Keyshare.Algorithm, cloudKeyOverride: String? = nil,
         tamperAppReads: @escaping @Sendable (Int, Data) -> Data = { $1 },
         tamperAppSends: @escaping @Sendable (Int, Data) -> Data = { $1 },
         rateLimiterA: NodeRateLimiter? = nil, rateLimiterB: NodeRateLimiter? = nil,
         clock: ManualClock = ManualClock()) throws {
        switch mode {
        case .duo:
            deployment = .duo(try DuoFixture(algorithm: algorithm, cloudKeyOverride: cloudKeyOverride, tamper: tamperAppReads,
                                             tamperSend: tamperAppSends,
                                             rateLimiter: rateLimiterA, clock: clock))
        case .trio:
            deployment = .trio(try TrioFixture(algorithm: algorithm, cloudKeyOverride: cloudKeyOverride, tamperAppReads: tamperAppReads,
                                               tamperAppSends: tamperAppSends,
                                               rateLimiterA: rateLimiterA, rateLimiterB: rateLimiterB, clock: clock))
        }
    }

    var mode: Keyshare.Mode {
        switch deployment {
        case .duo: .duo
        case .trio: .trio
        }
    }

    /// The duo deployment (nil in trio).
    var duo: DuoFixture? { if case .duo(let fixture) = deployment { fixture } else { nil } }
    /// The trio deployment (nil in duo).
    var trio: TrioFixture? { if case .trio(let fixture) = deployment { fixture } else { nil } }

    /// The app session wired to the entry node.
    var session: AppUnderTest {
        switch deployment {
        case .duo(let fixture): .duo(fixture.session)
        case .trio(let fixture): .trio(fixture.session)
        }
    }

    var storage: RecordingStorage {
        switch deployment {
        case .duo(let fixture): fixture.storage
        case .trio(let fixture): fixture.storage
        }
    }

    /// The app's device key.
    var signer: SoftwareEd25519MessageSigner {
        switch deployment {
        case .duo(let fixture): fixture.signer
        case .trio(let fixture): fixture.signer
        }
    }

    var clock: ManualClock {
        switch deployment {
        case .duo(let fixture): fixture.clock
        case .trio(let fixture): fixture.clock
        }
    }

    /// The app's link to the entry node.
    var client: LoopbackClient {
        switch deployment {
        case .duo(let fixture): fixture.client
        case .trio(let fixture): fixture.client
        }
    }

    /// The node the app connects to: duo's node, trio's A.
    var entryStore: NodeShareStore {
        switch deployment {
        case .duo(let fixture): fixture.store
        case .trio(let fixture): fixture.storeA
        }
    }

    var entryRunner: NodeStepRunner {
        switch deployment {
        case .duo(let fixture): fixture.runner
        case .trio(let fixture): fixture.runnerA
        }
    }

    /// Every node's store: duo [node], trio [A, B].
    var stores: [NodeShareStore] {
        switch deployment {
        case .duo(let fixture): [fixture.store]
        case .trio(let fixture): [fixture.storeA, fixture.storeB]
        }
    }

    /// The key the app pins (`cloudVerifyingKey`): duo's node key, trio's cluster key.
    var cloudKeyHex: String {
        switch deployment {
        case .duo(let fixture): Hex.encode(fixture.nodeKey.verifyingKey.bytes)
        case .trio(let fixture): Hex.encode(fixture.clusterKey.verifyingKey.bytes)
        }
    }

    /// The entry node's own key (what the app bans when that node cheats).
    var entryNodeKeyHex: String {
        switch deployment {
        case .duo(let fixture): Hex.encode(fixture.nodeKey.verifyingKey.bytes)
        case .trio(let fixture): Hex.encode(fixture.runnerA.party.nodeKey.verifyingKey.bytes)
        }
    }

    /// Another app session on this fixture's nodes and clock: `signer` is the device (pass `self.signer`
    /// for the same device), `storage` and `client` default to fresh storage and this fixture's client.
    func session(_ algorithm: Keyshare.Algorithm, signer: any MessageSigner, storage: any StorageClient = RecordingStorage(),
                 client: (any NetworkClient)? = nil) -> AppUnderTest {
        switch deployment {
        case .duo(let fixture): .duo(fixture.session(algorithm, signer: signer, storage: storage, client: client))
        case .trio(let fixture): .trio(fixture.session(algorithm, signer: signer, storage: storage, client: client))
        }
    }

    /// The entry node restarted (or another process on the same database): same key and store, a fresh
    /// in-memory replay window. Trio: A, linked to B through `peer`.
    func restartedEntryRunner(peer: InProcessPeer? = nil) throws -> NodeStepRunner {
        switch deployment {
        case .duo(let fixture):
            NodeStepRunner(nodeKey: fixture.nodeKey, store: fixture.store, replayWindow: try ReplayWindow(), clock: fixture.clock.read)
        case .trio(let fixture):
            NodeStepRunner(identity: fixture.identityA, store: fixture.storeA, peer: peer ?? InProcessPeer(),
                           replayWindow: try ReplayWindow(), clock: fixture.clock.read, frameTimeout: .seconds(2))
        }
    }
}

/// An app session of either mode, with the operations every mode has (trio's signing defaults to node A
/// with the fallback to B, as `TrioSession.signature(keyshare:message:chainPath:)`).
enum AppUnderTest: Sendable {
    case duo(DuoSession)
    case trio(TrioSession)

    var mode: Keyshare.Mode {
        switch self {
        case .duo: .duo
        case .trio: .trio
        }
    }

    var backupSink: (any BackupSink)? {
        get {
            switch self {
            case .duo(let session): session.backupSink
            case .trio(let session): session.backupSink
            }
        }
        nonmutating set {
            switch self {
            case .duo(let session): session.backupSink = newValue
            case .trio(let session): session.backupSink = newValue
            }
        }
    }

    var logger: any SilentShardLogger {
        get {
            switch self {
            case .duo(let session): session.logger
            case .trio(let session): session.logger
            }
        }
        nonmutating set {
            switch self {
            case .duo(let session): session.logger = newValue
            case .trio(let session): session.logger = newValue
            }
        }
    }

    func keygen() async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.keygen()
        case .trio(let session): try await session.keygen()
        }
    }

    func keyRefresh(keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.keyRefresh(keyshare: keyshare)
        case .trio(let session): try await session.keyRefresh(keyshare: keyshare)
        }
    }

    func `import`(privateKey: Data, rootChainCode: Data) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.import(privateKey: privateKey, rootChainCode: rootChainCode)
        case .trio(let session): try await session.import(privateKey: privateKey, rootChainCode: rootChainCode)
        }
    }

    func signature(keyshare: Keyshare, message: Data) async throws(SilentShardError) -> Signature {
        switch self {
        case .duo(let session): try await session.signature(keyshare: keyshare, message: message)
        case .trio(let session): try await session.signature(keyshare: keyshare, message: message)
        }
    }

    /// Signs with the entry node only: duo's node; trio's A, with no fallback to B
    /// (`TrioSession.signature(keyshare:message:chainPath:signer:)` with `.nodeA`).
    func signatureWithEntryNode(keyshare: Keyshare, message: Data) async throws(SilentShardError) -> Signature {
        switch self {
        case .duo(let session): try await session.signature(keyshare: keyshare, message: message)
        case .trio(let session): try await session.signature(keyshare: keyshare, message: message, signer: .nodeA)
        }
    }

    /// Signs with every signer set of the mode, each verified by the caller: duo's one node; trio with A,
    /// then with B (A relaying), each without fallback.
    func signatureWithEachSigner(keyshare: Keyshare, message: Data) async throws(SilentShardError) -> [Signature] {
        switch self {
        case .duo(let session): [try await session.signature(keyshare: keyshare, message: message)]
        case .trio(let session):
            [try await session.signature(keyshare: keyshare, message: message, signer: .nodeA),
             try await session.signature(keyshare: keyshare, message: message, signer: .nodeB)]
        }
    }

    func reconcileKeyshare(keyId: String) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.reconcileKeyshare(keyId: keyId)
        case .trio(let session): try await session.reconcileKeyshare(keyId: keyId)
        }
    }

    func preSignature(keyshare: Keyshare) async throws(SilentShardError) -> PreSignature {
        switch self {
        case .duo(let session): try await session.preSignature(keyshare: keyshare)
        case .trio(let session): try await session.preSignature(keyshare: keyshare)
        }
    }

    func preSignatureFinal(preSignature: PreSignature, message: Data) async throws(SilentShardError) -> Signature {
        switch self {
        case .duo(let session): try await session.preSignatureFinal(preSignature: preSignature, message: message)
        case .trio(let session): try await session.preSignatureFinal(preSignature: preSignature, message: message)
        }
    }

    /// A presignature at `chainPath` with `signer` (trio's A or B; duo has one node and takes nil) for `ttl` seconds
    /// (nil: the default lifetime).
    func preSignature(keyshare: Keyshare, chainPath: String, signer: TrioSigner?, ttl: UInt32?) async throws(SilentShardError) -> PreSignature {
        switch self {
        case .duo(let session):
            precondition(signer == nil, "duo has one node")
            return try await session.preSignature(keyshare: keyshare, chainPath: chainPath, ttl: ttl)
        case .trio(let session):
            return try await session.preSignature(keyshare: keyshare, chainPath: chainPath, signer: signer ?? .nodeA, ttl: ttl)
        }
    }

    /// The presignatures the app's storage still holds for `keyshare` (soonest to expire first).
    func preSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        switch self {
        case .duo(let session): try await session.preSignatures(keyshare: keyshare)
        case .trio(let session): try await session.preSignatures(keyshare: keyshare)
        }
    }

    func backupState(keyId: String) async throws(SilentShardError) -> BackupState {
        switch self {
        case .duo(let session): try await session.backupState(keyId: keyId)
        case .trio(let session): try await session.backupState(keyId: keyId)
        }
    }

    func backup(keyshare: Keyshare, password: String, limits: Argon2id.Limits,
                store: (Data) async throws -> Void) async throws(SilentShardError) {
        switch self {
        case .duo(let session): try await session.backup(keyshare: keyshare, password: password, limits: limits, store: store)
        case .trio(let session): try await session.backup(keyshare: keyshare, password: password, limits: limits, store: store)
        }
    }

    func restoreBackup(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        switch self {
        case .duo(let session): try await session.restoreBackup(keyshare)
        case .trio(let session): try await session.restoreBackup(keyshare)
        }
    }
}
