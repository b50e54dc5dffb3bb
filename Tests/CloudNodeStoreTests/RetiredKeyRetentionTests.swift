import Foundation
import MPCCrypto
import Testing
@testable import CloudNode
import SilentShardCore

/// Second review finding 8 (second half): `retired_keys` tombstones never expired, so the table only
/// grew. They are now kept for the store's `retiredKeyRetention` (its owner is told KEY_RETIRED that
/// long) and then deleted by the purge task (`purgeExpired`).
@Suite("Finding 8: retired-key tombstones expire after their retention")
struct RetiredKeyRetentionTests {
    let child = String(repeating: "3c", count: 32)
    let path = DerivationPathBytes(indices: [0x8000_002C, 0x8000_003C, 0]).encoded

    @Test(arguments: StoreBackend.allCases)
    func finding8_retiredKeysArePurgedAfterTheirRetention(_ backend: StoreBackend) throws {
        let now = LockedValue(Date(timeIntervalSince1970: 1_900_000_000))
        let store = try storeWithCommittedKey(scratchLocation(backend), clock: { now.withLock { $0 } })
        try store.prepare(keyId: child, share: keyshare(gen: 0x21, seed: 0x21, digest: 0x21), party: "node 1", rederivable: true)
        try store.commit(keyId: child, gen: bytes32(0x21), digest: bytes32(0x21), party: "app", owner: "alice",
                         parent: (keyId: keyA, gen: bytes32(1), path: path))
        // The parent moves on: the child is retired and leaves its tombstone.
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner")
        #expect(try store.retirement(keyId: child)?.parentKeyId == keyA)

        // Within the retention the purge keeps it: the owner is still told KEY_RETIRED.
        now.withLock { $0 = $0.addingTimeInterval(store.retiredKeyRetention - 60) }
        try store.purgeExpired()
        #expect(try store.retirement(keyId: child)?.parentKeyId == keyA)
        #expect(try store.ownership(keyId: child) == .owned(by: "alice"))

        // Past it, the purge deletes it.
        now.withLock { $0 = $0.addingTimeInterval(120) }
        try store.purgeExpired()
        #expect(try store.retirement(keyId: child) == nil)
        #expect(try store.ownership(keyId: child) == .unknownKey)
    }
}
