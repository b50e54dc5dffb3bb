@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport
import Testing

/// A fresh database for one test: a new SQLite file, or a new schema on the test PostgreSQL server
/// (`SILENTSHARD_TEST_POSTGRES_URL`; without it the PostgreSQL case is cancelled, as in the store suites).
enum ClusterDatabase: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    var description: String { rawValue }

    func scratch() throws -> String {
        switch self {
        case .sqlite:
            return FileManager.default.temporaryDirectory.appendingPathComponent("limits-\(UUID().uuidString).sqlite").path
        case .postgres:
            let url = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_POSTGRES_URL"] ?? ""
            guard !url.isEmpty else {
                try Test.cancel("SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL case skipped (scripts/test starts a server)")
            }
            let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            try PostgresConnection(conninfo: url).execute("CREATE SCHEMA \(schema)")
            return url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
        }
    }
}

/// Proposal P5 (`docs/protocol/session.md` §9.5): the limits that count events over time are counted per
/// (principal, device key) and shared by every process on one node database. Two limiters on two store
/// instances (two connections, as two processes have) stand for two node processes here;
/// `ClusterRateLimitProcessTests` runs real ones. One manual clock drives both.
@Suite("session.md §9.5 rate limits shared by a cluster through the node database (P5)", .timeLimit(.minutes(30)))
struct ClusterRateLimitTests {
    static let victimDevice: [UInt8] = [1] + [UInt8](repeating: 0x5A, count: 32)

    /// Two "processes": a limiter each, over its own store instance on `location`.
    static func pair(_ location: String, limits: NodeRateLimits, clock: ManualClock) throws -> [NodeRateLimiter] {
        let masterKey = NodeMasterKey.random()
        return try (0..<2).map { _ in
            let store = try NodeShareStore(location: NodeStoreLocation(location), masterKey: masterKey, clock: clock.date)
            return NodeRateLimiter(limits: limits, clock: clock.read, cluster: ClusterRateLimits(store: store, clock: clock.read))
        }
    }

    @Test("X's bad signatures with Y's device key never block Y; alternating between processes, X is blocked at the 5th in total",
          arguments: ClusterDatabase.allCases)
    func deviceFailuresPerPrincipalAcrossProcesses(_ database: ClusterDatabase) async throws {
        let clock = ManualClock(milliseconds: 1_800_000_000_000)
        let limiters = try Self.pair(try database.scratch(), limits: NodeRateLimits(failedDeviceSignaturesPerMinute: 5), clock: clock)
        for index in 0..<4 {
            await limiters[index % 2].recordDeviceSignatureFailure(Self.victimDevice, principal: "X")
            clock.advance(seconds: 1)
        }
        // 4 in total (2 in each process): nobody is limited yet.
        for limiter in limiters {
            #expect(await limiter.checkDeviceAcrossCluster(Self.victimDevice, principal: "X") == .allowed)
        }
        await limiters[0].recordDeviceSignatureFailure(Self.victimDevice, principal: "X")
        // The 5th (3 in process 0, 2 in process 1) blocks X in both: process 1 has counted only 2 itself.
        #expect(limiters[1].checkDevice(Self.victimDevice, principal: "X") == .allowed)
        for limiter in limiters {
            #expect(await limiter.checkDeviceAcrossCluster(Self.victimDevice, principal: "X") == .limited(retryAfter: 56))
            // The attack: Y, the device's owner, is not locked out by X's failures with Y's key.
            #expect(await limiter.checkDeviceAcrossCluster(Self.victimDevice, principal: "Y") == .allowed)
        }
        // The minute after the first failure, one has left the window.
        clock.advance(seconds: 56)
        #expect(await limiters[1].checkDeviceAcrossCluster(Self.victimDevice, principal: "X") == .allowed)
        #expect(limiters[1].refusals(.deviceFailuresPerMinute) == 1)
    }

    @Test("key creations per principal per hour: alternating processes admit the limit once in total", arguments: ClusterDatabase.allCases)
    func keyCreationsAcrossProcesses(_ database: ClusterDatabase) async throws {
        let clock = ManualClock(milliseconds: 1_800_000_000_000)
        let limiters = try Self.pair(try database.scratch(), limits: NodeRateLimits(keyCreationsPerPrincipalPerHour: 3), clock: clock)
        var verdicts: [RateLimitVerdict?] = []
        for index in 0..<6 {
            verdicts.append(await limiters[index % 2].startKeyCreationAcrossCluster(principal: "alice"))
            clock.advance(seconds: 60)
        }
        #expect(verdicts == [.allowed, .allowed, .allowed, .limited(retryAfter: 3_420), .limited(retryAfter: 3_360),
                             .limited(retryAfter: 3_300)])
        #expect(await limiters[0].startKeyCreationAcrossCluster(principal: "bob") == .allowed)
    }

    @Test("failed authentications: alternating processes block the address at the limit's failure, in both, at the door too",
          arguments: ClusterDatabase.allCases)
    func authenticationFailuresAcrossProcesses(_ database: ClusterDatabase) async throws {
        let clock = ManualClock(milliseconds: 1_800_000_000_000)
        let limits = NodeRateLimits(failedAuthenticationsPerMinute: 4, blockSeconds: 600)
        let limiters = try Self.pair(try database.scratch(), limits: limits, clock: clock)
        for index in 0..<3 { await limiters[index % 2].recordAuthenticationFailure(from: "198.51.100.7") }
        for limiter in limiters { #expect(await limiter.checkAddressAcrossCluster("198.51.100.7") == .allowed) }
        await limiters[1].recordAuthenticationFailure(from: "198.51.100.7")
        // Process 0 counted 2 itself; the cluster's block reaches it, and its door then refuses without I/O.
        #expect(limiters[0].checkAddress("198.51.100.7") == .allowed)
        #expect(await limiters[0].checkAddressAcrossCluster("198.51.100.7") == .limited(retryAfter: 600))
        #expect(limiters[0].openConnection(from: "198.51.100.7") == .limited(retryAfter: 600))
        #expect(await limiters[1].checkAddressAcrossCluster("198.51.100.7") == .limited(retryAfter: 600))
        #expect(await limiters[0].checkAddressAcrossCluster("198.51.100.8") == .allowed)
        clock.advance(seconds: 600)
        for limiter in limiters { #expect(await limiter.checkAddressAcrossCluster("198.51.100.7") == .allowed) }
    }

    @Test("a database failure: admission checks fail closed, failures still count in the process, the address check falls back to it")
    func databaseFailure() async throws {
        let clock = ManualClock(milliseconds: 1_800_000_000_000)
        let path = try ClusterDatabase.sqlite.scratch()
        let limits = NodeRateLimits(failedAuthenticationsPerMinute: 2, keyCreationsPerPrincipalPerHour: 3, failedDeviceSignaturesPerMinute: 2)
        let limiter = try Self.pair(path, limits: limits, clock: clock)[0]
        try SQLiteConnection(path: path).execute("DROP TABLE rate_events; DROP TABLE rate_blocks")
        #expect(await limiter.checkDeviceAcrossCluster(Self.victimDevice, principal: "X") == nil)
        #expect(await limiter.startKeyCreationAcrossCluster(principal: "X") == nil)
        #expect(await limiter.checkAddressAcrossCluster("192.0.2.1") == .allowed)
        for _ in 0..<2 {
            await limiter.recordDeviceSignatureFailure(Self.victimDevice, principal: "X")
            await limiter.recordAuthenticationFailure(from: "192.0.2.1")
        }
        // Nothing crashed and the limits did not turn off: this process's own counts refuse.
        #expect(await limiter.checkDeviceAcrossCluster(Self.victimDevice, principal: "X") == .limited(retryAfter: 60))
        #expect(await limiter.checkAddressAcrossCluster("192.0.2.1") == .limited(retryAfter: 600))
        #expect(limiter.storeErrors == 7)
        #expect(limiter.metricsText().contains("silentshard_node_rate_limit_store_errors_total 7"))
    }
}
