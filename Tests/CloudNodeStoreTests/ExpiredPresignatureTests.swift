import Foundation
import MPCCrypto
import Testing
@testable import CloudNode
import SilentShardCore

/// Security review finding 9: expired presignatures counted toward the per-key quota until someone
/// called `purgeExpired` (nobody did), so a key's quota filled with dead halves and finish records were
/// never pruned. Expired halves are now dropped when a new one is stored, and the node purges on a timer.
@Suite("NodeShareStore: expired presignatures free the quota and are purged")
struct ExpiredPresignatureTests {
    func presignature(_ id: UInt8, expiresAt: Date) -> NodePresignature {
        NodePresignature(id: bytes32(id), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                         expiresAt: expiresAt, secret: secretShare(id, count: 160))
    }

    @Test("expired halves do not hold the quota; the purge task removes them", arguments: StoreBackend.allCases)
    func expiredHalvesFreeTheQuota(_ backend: StoreBackend) async throws {
        let start = Date()
        let clock = LockedValue(start)
        let store = try storeWithCommittedKey(scratchLocation(backend), presignatureLimit: 2, clock: { clock.withLock { $0 } })
        try store.storePresignature(presignature(1, expiresAt: start.addingTimeInterval(60)))
        try store.storePresignature(presignature(2, expiresAt: start.addingTimeInterval(60)))
        #expect(nodeError { try store.storePresignature(presignature(3, expiresAt: start.addingTimeInterval(600))) }
                == .presignatureLimit(keyId: keyA))
        clock.withLock { $0 = start.addingTimeInterval(120) }
        try store.storePresignature(presignature(3, expiresAt: start.addingTimeInterval(600)))
        #expect(try store.presignatureCount(keyId: keyA) == 1)

        // The purge task: an expired half of another key goes without anyone storing or consuming.
        try store.prepare(keyId: keyB, share: keyshare(gen: 1, seed: 9, digest: 0xD9), party: "node 1")
        try store.commit(keyId: keyB, gen: bytes32(1), digest: bytes32(0xD9), party: "app", owner: "test-owner")
        try store.storePresignature(NodePresignature(id: bytes32(4), keyId: keyB, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: start.addingTimeInterval(130), secret: secretShare(4, count: 160)))
        clock.withLock { $0 = start.addingTimeInterval(200) }
        let purging = store.startPurging(every: .milliseconds(20))
        defer { purging.cancel() }
        // Waits for the condition (up to two minutes of polling: no bound on how slow the machine is).
        for _ in 0..<6000 where try store.presignatureCount(keyId: keyB) != 0 { try await Task.sleep(for: .milliseconds(20)) }
        #expect(try store.presignatureCount(keyId: keyB) == 0)
        #expect(try store.presignatureCount(keyId: keyA) == 1)
    }
}
