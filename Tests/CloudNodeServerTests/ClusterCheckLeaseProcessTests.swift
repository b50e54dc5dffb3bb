import ChildProcesses
@testable import CloudNode
import Foundation
import MPCCrypto
import SilentShardTestSupport
import Testing

/// Issue 33 item 4 with real processes: a device's check lease (`NodeShareStore+DeviceCheckLeases`) taken by one
/// `silentshard-test-limits` process excludes another on the same SQLite file or PostgreSQL database, outlives the
/// first one's crash (SIGKILL, no release) until its expiry on the store's clock, and the ban a holder stored is
/// read by the next holder. Every command carries the time the processes' store clocks read.
/// (`ClusterCheckLeaseTests` runs whole cheating and honest sessions on two store instances in one process.)
@Suite("Issue 33 item 4: a device's check lease across node processes on one database", .serialized,
       .timeLimit(.minutes(10)))
struct ClusterCheckLeaseProcessTests {
    typealias LeaseProcess = ClusterRateLimitProcessTests.LimiterProcess

    @Test("issue33_item4: a lease excludes another process, survives its holder's crash until it expires, and the next holder reads the ban",
          arguments: ClusterDatabase.allCases)
    func issue33_item4_leaseAcrossProcesses(_ database: ClusterDatabase) throws {
        try #require(FileManager.default.isExecutableFile(atPath: ClusterRateLimitProcessTests.binary.path),
                     "build the silentshard-test-limits product first")
        let location = try database.scratch()
        let keyBytes = SecureRandom.bytes(count: 32)
        let masterKey = Hex.encode(keyBytes)
        let start = ClusterRateLimitProcessTests.start
        let first = try LeaseProcess(database: location, masterKey: masterKey, limits: "standard")
        let second = try LeaseProcess(database: location, masterKey: masterKey, limits: "standard")
        defer { for process in [first, second] { process.stop() } }
        let deviceBytes = [UInt8](repeating: 0x5D, count: 32), device = Hex.encode(deviceBytes)

        #expect(first.ask("lease-acquire \(device) 01 30 \(start)") == "acquired")
        #expect(second.ask("lease-acquire \(device) 02 30 \(start)") == "busy")
        // The first process crashes holding the lease: the second waits out its expiry (30 s on the store clock).
        first.process.kill()
        #expect(first.process.waitForExit(timeout: 30))
        #expect(second.ask("lease-acquire \(device) 02 30 \(start + 29_000)") == "busy")
        #expect(second.ask("lease-acquire \(device) 02 30 \(start + 30_000)") == "acquired")

        // A third process meets the second's lease; the second's step fails its check: the ban is stored, then
        // the lease released; the third then holds it and reads the ban.
        let third = try LeaseProcess(database: location, masterKey: masterKey, limits: "standard")
        defer { third.stop() }
        #expect(third.ask("lease-acquire \(device) 03 30 \(start + 31_000)") == "busy")
        let store = try NodeShareStore(location: NodeStoreLocation(location), masterKey: try NodeMasterKey(bytes: keyBytes))
        try store.ban(deviceKey: deviceBytes, reason: "AbortAndBan in sign", instanceId: [UInt8](repeating: 9, count: 32),
                      party: "node")
        #expect(third.ask("lease-release \(device) 03 \(start + 31_000)") == "absent")
        #expect(second.ask("lease-release \(device) 02 \(start + 31_000)") == "released")
        #expect(third.ask("lease-acquire \(device) 03 30 \(start + 31_000)") == "acquired banned")
    }
}
