@testable import CloudNode
import Foundation
import MPCCrypto
import MPCProtocols
import SilentShardCore
import SilentShardTestSupport
import SilentShardTestTraits
import Testing
import duo

/// Issue 33 item 4: a device's DKLs23 consistency checks run one at a time across every process of a cluster.
/// The outcome of the node's checks of the app's messages depends on bits of the node's long-lived secrets
/// (SoftSpokenOT's Δ, the multiplication and Γ checks); a device that learns whether each check passed learns
/// those bits. `DeviceBanLedger` kept one device's checks apart in one process only: a device running sessions
/// on N processes sharing one database learned N outcomes before the first ban reached the store. Now each
/// ECDSA sign/preSign step holds the device's check lease in the store (`DeviceCheckLease`): a second
/// process's step waits for it, reads the first one's ban and is BANNED before its check runs. Two node
/// "processes" here: two store instances (connections of their own) and two step runners on one database
/// (a SQLite file, or a PostgreSQL schema).
@Suite("Issue 33 item 4: one check outcome per device across a cluster's processes", .serialized, .heavy,
       .timeLimit(.minutes(30)))
struct ClusterCheckLeaseTests {
    enum Engine: String, CaseIterable, Sendable {
        case sqlite, postgres

        /// A fresh database: a SQLite file, or a new schema on the test PostgreSQL server.
        func location() throws -> NodeStoreLocation {
            switch self {
            case .sqlite:
                let directory = NSTemporaryDirectory() + "silentshard-check-lease-" + UUID().uuidString
                try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
                return .sqlite(path: directory + "/node.sqlite")
            case .postgres:
                let url = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_POSTGRES_URL"] ?? ""
                guard !url.isEmpty else {
                    try Test.cancel("SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL case skipped (scripts/test starts a server)")
                }
                let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
                try PostgresConnection(conninfo: url).execute("CREATE SCHEMA \(schema)")
                return .postgres(url: url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)")
            }
        }
    }

    /// Two node processes of one cluster: the fixture's (A) and B, with its own store instance and runner on
    /// the same database, node key and clock.
    struct Cluster {
        let fixture: DuoFixture
        let storeB: NodeShareStore
        let runnerB: NodeStepRunner
        let location: NodeStoreLocation

        init(_ engine: Engine) throws {
            let location = try engine.location()
            self.location = location
            let masterKey = NodeMasterKey.random()
            fixture = try DuoFixture(algorithm: .ecdsa, masterKey: masterKey, storeLocation: location)
            storeB = try NodeShareStore(location: location, masterKey: masterKey, clock: fixture.clock.date)
            runnerB = NodeStepRunner(nodeKey: fixture.nodeKey, store: storeB, replayWindow: try ReplayWindow(),
                                     clock: fixture.clock.read)
        }
    }

    /// Which sessions' steps reached their checks.
    final class Checks: Sendable {
        private let runs = LockedValue<[String]>([])
        func record(_ name: String) { runs.withLock { $0.append(name) } }
        var all: [String] { runs.withLock { $0 } }
    }

    /// Flips a bit of t̃ (row 100) in the app's SoftSpokenOT message (signing R1): the node's OT consistency
    /// check fails whatever its Δ (`DKLsSignTamperTests`), at the node's first step over the app's messages.
    static let otCheat = flipping(tag: DKLsTag.signRound1Direct, offset: 6_744)

    @Test("issue33_item4: concurrent OT-check cheats of one device on two processes: one check runs, the other is BANNED before its check",
          arguments: Engine.allCases)
    func issue33_item4_concurrentOTCheatsOnTwoProcessesRunOneCheck(engine: Engine) async throws {
        let cluster = try Cluster(engine)
        let fixture = cluster.fixture
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)

        // A's check is held until B's step has tried to start — it finds the lease busy (or, without the lease,
        // runs its own check beside A's). B's waits for the lease end when A's session has ended.
        let checks = Checks()
        let aChecking = ConcurrentCheatTests.Signal(), releaseA = ConcurrentCheatTests.Signal()
        let aEnded = ConcurrentCheatTests.Signal()
        fixture.runner.bans.setCheckHook { _, step, point in
            guard step == 0, point == .checking else { return }
            checks.record("A")
            aChecking.fire()
            await releaseA.wait()
        }
        cluster.runnerB.bans.setCheckHook { _, step, point in
            guard step == 0 else { return }
            switch point {
            case .checking:
                checks.record("B")
                releaseA.fire()
            case .leaseBusy:
                releaseA.fire()
            case .ended:
                break
            }
        }
        cluster.runnerB.bans.leasePolicy.sleep = { _ in await aEnded.wait() }

        let sessionA = Task { () async throws -> (NodeStepReport, SilentShardError?) in
            defer { aEnded.fire() }
            return try await BanTests.cheat(fixture, keyshare: keyshare, corrupt: Self.otCheat)
        }
        // B's R1 goes out while A's check runs.
        let sessionB = Task { () async throws -> (NodeStepReport, SilentShardError?) in
            try await BanTests.cheat(fixture, keyshare: keyshare, corrupt: Self.otCheat, beforeSend: { flight in
                if flight == 0 { await aChecking.wait() }
            }, runner: cluster.runnerB)
        }
        let (first, _) = try await sessionA.value
        let (second, secondSaw) = try await sessionB.value

        #expect(checks.all == ["A"], "the checks that ran: \(checks.all)")
        #expect(first == .failed(.abortProtocolAndBanParty(party: .app)))
        #expect(second == .failed(.partyBanned(party: .app)))
        #expect(secondSaw == .deviceBanned(by: .node(1)))
        #expect(try cluster.storeB.isBanned(deviceKey: device.identity))
        // One ban record, one audit line: the leased step wrote it; `banIfRequired` did not write it again.
        #expect(try fixture.store.auditLog().filter { $0.operation == "ban" }.count == 1)
    }

    @Test("issue33_item4: honest concurrent presigns of one device on two processes both succeed, their steps taking turns",
          arguments: Engine.allCases)
    func issue33_item4_honestConcurrentPresignsOnTwoProcessesSucceed(engine: Engine) async throws {
        let cluster = try Cluster(engine)
        let fixture = cluster.fixture
        let keyshare = try await fixture.session.keygen()
        let sessionB = fixture.session(.ecdsa, signer: fixture.signer, client: LoopbackDuoClient(runner: cluster.runnerB))

        // A's first step is held until B's first step found the lease busy; a busy step's wait ends when the
        // other process's leased step ended (machine speed does not matter).
        let aChecking = ConcurrentCheatTests.Signal(), bWaited = ConcurrentCheatTests.Signal()
        let holdingA = Holding(), holdingB = Holding()
        let busyCount = LockedValue(0)
        fixture.runner.bans.setCheckHook { _, step, point in
            holdingA.track(point)
            if step == 0, point == .checking {
                aChecking.fire()
                await bWaited.wait()
            }
        }
        cluster.runnerB.bans.setCheckHook { _, _, point in
            holdingB.track(point)
            guard point == .leaseBusy else { return }
            busyCount.withLock { $0 += 1 }
            bWaited.fire()
        }
        fixture.runner.bans.leasePolicy.sleep = { _ in await holdingB.waitUntilFree() }
        cluster.runnerB.bans.leasePolicy.sleep = { _ in await holdingA.waitUntilFree() }

        let presignA = Task { try await fixture.session.preSignature(keyshare: keyshare) }
        await aChecking.wait()
        let presignB = Task { try await sessionB.preSignature(keyshare: keyshare) }
        let (a, b) = (try await presignA.value, try await presignB.value)
        #expect(busyCount.withLock { $0 } >= 1, "B's step waited for A's lease")
        // Each app finishes its own presignature (the app's half stays with the session that made it).
        for (session, presignature) in [(fixture.session, a), (sessionB, b)] {
            let message = Data(repeating: 0x5C, count: 32)
            let signature = try await session.preSignatureFinal(preSignature: presignature, message: message)
            #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
        }
    }

    /// Whether a runner's leased step holds the lease (from its check to its end), and waits for it to end.
    final class Holding: Sendable {
        private let state = LockedValue<(holding: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

        func track(_ point: DeviceBanLedger.CheckPoint) {
            switch point {
            case .checking: state.withLock { $0.holding = true }
            case .ended:
                let waiters = state.withLock { state in
                    state.holding = false
                    defer { state.waiters = [] }
                    return state.waiters
                }
                for waiter in waiters { waiter.resume() }
            case .leaseBusy: break
            }
        }

        func waitUntilFree() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let holding = state.withLock { state in
                    if state.holding { state.waiters.append(continuation) }
                    return state.holding
                }
                if !holding { continuation.resume() }
            }
        }
    }

    @Test("issue33_item4: a lease left by a crashed process makes the device's steps wait, then refuse KEY_BUSY, until it expires",
          arguments: Engine.allCases)
    func issue33_item4_leaseOfACrashedProcessExpires(engine: Engine) async throws {
        let cluster = try Cluster(engine)
        let fixture = cluster.fixture
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        // Process B took the device's lease and crashed (it never releases).
        let seconds = fixture.runner.bans.leasePolicy.seconds
        #expect(try cluster.storeB.acquireDeviceCheckLease(deviceKey: device.identity, holder: [0xDE, 0xAD], seconds: seconds)
                == .acquired(banned: false))
        let busy = LockedValue<[[UInt8]: Int]>([:])
        fixture.runner.bans.setCheckHook { instanceID, _, point in
            if point == .leaseBusy { busy.withLock { $0[instanceID, default: 0] += 1 } }
        }
        fixture.runner.bans.leasePolicy.sleep = { _ in }

        // The SDK retries KEY_BUSY a few times (each a new session, each waiting its bounded time), then reports it.
        let message = Data(repeating: 0x42, count: 32)
        await #expect(throws: SilentShardError.keyBusy) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: message)
        }
        #expect(fixture.client.reports.last == .failed(.keyBusy))
        // Each refused step tried as long as its waits fit in `maximumWait`, then gave up.
        let policy = fixture.runner.bans.leasePolicy
        var attempts = 1, waited = DeviceCheckLeasePolicy.wait(after: 0)
        while waited <= policy.maximumWait {
            waited += DeviceCheckLeasePolicy.wait(after: attempts)
            attempts += 1
        }
        let counts = busy.withLock { Array($0.values) }
        #expect(counts.count == StepRetryPolicy.busyRetries + 1 && counts.allSatisfy { $0 == attempts },
                "busy attempts per session: \(counts), expected \(attempts) each")

        // At the lease's expiry (the store's clock) the device signs again.
        fixture.clock.advance(seconds: Double(seconds))
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }

    @Test("audit of issue 33 item 4, LOW-2: a step whose lease another process took over while its check ran (a stall past the expiry) withholds its outcome",
          arguments: Engine.allCases)
    func issue33_item4_audit_stepThatLostItsLeaseWithholdsItsOutcome(engine: Engine) async throws {
        let cluster = try Cluster(engine)
        let fixture = cluster.fixture
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        let seconds = fixture.runner.bans.leasePolicy.seconds
        // While A's first check runs, the lease expires and process B takes it (the holder stalled past the expiry).
        let takenOver = LockedValue(false)
        let clock = fixture.clock, storeB = cluster.storeB
        fixture.runner.bans.setCheckHook { _, step, point in
            guard step == 0, point == .checking, !takenOver.withLock({ $0 }) else { return }
            clock.advance(seconds: Double(seconds))
            let taken = try? storeB.acquireDeviceCheckLease(deviceKey: device.identity, holder: [0xB0], seconds: seconds)
            takenOver.withLock { $0 = taken == .acquired(banned: false) }
        }
        let message = Data(repeating: 0x24, count: 32)
        await #expect(throws: SilentShardError.self) {
            _ = try await fixture.session.signature(keyshare: keyshare, message: message)
        }
        #expect(takenOver.withLock { $0 })
        guard case .failed(.storage)? = fixture.client.reports.last else {
            Issue.record("the node's report: \(String(describing: fixture.client.reports.last)), expected a storage failure")
            return
        }
        // B ends its step; the device signs again.
        #expect(try storeB.releaseDeviceCheckLease(deviceKey: device.identity, holder: [0xB0]))
        let signature = try await fixture.session.signature(keyshare: keyshare, message: message)
        #expect(try verifyECDSA(signature, hash: message, keyshare: keyshare))
    }

    @Test("audit of issue 33 item 4, LOW-3: a failed check whose ban cannot be stored ends as a storage failure (its outcome stays in the node), keeps its lease and is refused by the process")
    func issue33_item4_audit_unstoredBanKeepsTheOutcomeInside() async throws {
        let cluster = try Cluster(.postgres)
        guard case .postgres(let url) = cluster.location else { return }
        let fixture = cluster.fixture
        let keyshare = try await fixture.session.keygen()
        let device = try DeviceKey(signer: fixture.signer)
        // The database refuses every ban (a failover, a lost connection): the ban's three attempts all fail.
        let connection = try PostgresConnection(conninfo: url)
        try connection.execute("""
            CREATE FUNCTION refuse_bans() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN RAISE EXCEPTION 'bans cannot be written (test)'; END $$
            """)
        try connection.execute("CREATE TRIGGER refuse_bans BEFORE INSERT OR UPDATE ON bans FOR EACH ROW EXECUTE FUNCTION refuse_bans()")

        let (report, saw) = try await BanTests.cheat(fixture, keyshare: keyshare, corrupt: Self.otCheat)
        guard case .failed(.storage) = report else {
            Issue.record("the node's report: \(report), expected a storage failure (not the ban's ABORT)")
            return
        }
        if case .abortProtocolAndBanParty? = saw { Issue.record("the cheater saw its check fail: \(String(describing: saw))") }
        if case .partyBanned? = saw { Issue.record("the cheater saw a ban: \(String(describing: saw))") }
        // The lease stays until it expires (no other process checks the device meanwhile); this process refuses it.
        #expect(try cluster.storeB.acquireDeviceCheckLease(deviceKey: device.identity, holder: [0xB1], seconds: 30) == .busy)
        #expect(fixture.runner.bans.contains(device.identity))
        #expect(try cluster.storeB.ban(deviceKey: device.identity) == nil, "the store has no ban")
    }
}
