import MPCCrypto
import Foundation
@testable import CloudNode
import SilentShardCore
import Testing

@Suite("Node share store: per-key leases and compare-and-swap commits")
struct LeaseTests {
    @Test("a lease excludes other sessions until released or expired, in every process that opens the database",
          arguments: StoreBackend.allCases)
    func leaseExcludesOthers(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let seconds = LockedValue<TimeInterval>(1_000_000)
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: seconds.withLock { $0 }) }
        let store = try NodeShareStore(location: location, masterKey: NodeMasterKey(bytes: bytes32(7)), clock: clock)
        let other = try NodeShareStore(location: location, masterKey: NodeMasterKey(bytes: bytes32(7)), clock: clock)
        try store.acquireLease(keyId: keyA, holder: bytes32(1), seconds: 60)
        try store.acquireLease(keyId: keyA, holder: bytes32(1), seconds: 60)  // the holder may extend
        #expect(nodeError { try other.acquireLease(keyId: keyA, holder: bytes32(2), seconds: 60) } == .keyBusy(keyId: keyA))
        try other.acquireLease(keyId: keyB, holder: bytes32(2), seconds: 60)  // other keys are independent
        try other.releaseLease(keyId: keyA, holder: bytes32(2))  // not the holder: no effect
        #expect(nodeError { try other.acquireLease(keyId: keyA, holder: bytes32(2), seconds: 60) } == .keyBusy(keyId: keyA))
        try store.releaseLease(keyId: keyA, holder: bytes32(1))
        try other.acquireLease(keyId: keyA, holder: bytes32(2), seconds: 60)
        // A lease left behind (crashed process) ends at its expiry.
        #expect(nodeError { try store.acquireLease(keyId: keyA, holder: bytes32(3), seconds: 60) } == .keyBusy(keyId: keyA))
        seconds.withLock { $0 += 61 }
        try store.acquireLease(keyId: keyA, holder: bytes32(3), seconds: 60)
        #expect(nodeError { try store.acquireLease(keyId: "not hex", holder: bytes32(3), seconds: 60) } == .invalidKeyId)
    }

    @Test("a lease's process: this one and pid 1 are alive; a gone or reused pid is dead; another boot or pid namespace is not judged")
    func leaseProcessLiveness() throws {
        let current = LeaseProcess.current
        try #require(!current.isEmpty, "Linux /proc")
        #expect(!LeaseProcess.isDead(current))
        let parts = current.split(separator: ":").map(String.init)
        try #require(parts.count == 4)
        let (boot, namespace) = (parts[0], parts[1])
        let initStart = try #require(LeaseProcess.startTime(pid: 1))
        #expect(!LeaseProcess.isDead("\(boot):\(namespace):1:\(initStart)"))
        #expect(LeaseProcess.isDead("\(boot):\(namespace):1:\(initStart)0"), "pid reused by another process")
        #expect(LeaseProcess.isDead("\(boot):\(namespace):2147483646:1"), "no such process")
        #expect(!LeaseProcess.isDead("00000000-0000-0000-0000-000000000000:\(namespace):2147483646:1"), "another boot or host")
        #expect(!LeaseProcess.isDead("\(boot):1:2147483646:1"), "another pid namespace")
        #expect(!LeaseProcess.isDead("garbage"))
        #expect(!LeaseProcess.isDead(""))
    }

    @Test("a direct commit refuses to replace a generation its session did not start from", arguments: StoreBackend.allCases)
    func commitIsCompareAndSwap(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))  // CURRENT = gen 1
        // Two refreshes started from gen 1; the first commits gen 2, the second (gen 3) must not overwrite it.
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 2, seed: 2), replacing: bytes32(1), party: "app", owner: "test-owner")
        #expect(nodeError { try store.commitDirectly(keyId: keyA, share: keyshare(gen: 3, seed: 3), replacing: bytes32(1), party: "app", owner: "test-owner") }
                == .currentChanged(keyId: keyA))
        #expect(try store.share(keyId: keyA) == keyshare(gen: 2, seed: 2))
        #expect(try store.decision(keyId: keyA, gen: bytes32(3)) == nil)
        // A keygen/import commit (replacing nil) cannot overwrite an existing key.
        #expect(nodeError { try store.commitDirectly(keyId: keyA, share: keyshare(gen: 4, seed: 4), replacing: nil, party: "app", owner: "test-owner") }
                == .currentChanged(keyId: keyA))
        try store.commitDirectly(keyId: keyB, share: keyshare(gen: 4, seed: 4), replacing: nil, party: "app", owner: "test-owner")
        #expect(try store.share(keyId: keyB) == keyshare(gen: 4, seed: 4))
    }
}

@Suite("Node share store: a re-derivable share (hard-derived child) after a failed attempt")
struct RederivablePrepareTests {
    @Test("an orphan PREPARED of the same gen is replaced, an aborted gen reopened; committed and other gens still refused")
    func rederivedChildIsNotBlocked() throws {
        let store = try NodeShareStore(path: scratchPath(), masterKey: .random())
        try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD1), party: "first attempt")
        // Without the flag: a conflict, as for any other operation.
        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD2), party: "retry") }
                == .preparedConflict(keyId: keyA))
        try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD2), party: "retry", rederivable: true)
        #expect(try store.status(keyId: keyA).preparedDigest == bytes32(0xD2))
        // The first attempt's COMMIT can no longer commit.
        #expect(nodeError { try store.commit(keyId: keyA, gen: bytes32(1), digest: bytes32(0xD1), party: "late", owner: "test-owner") }
                == .preparedMismatch(keyId: keyA))
        // Aborted, then derived again.
        try store.abort(keyId: keyA, gen: bytes32(1), party: "rollback")
        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD3), party: "again") }
                == .alreadyDecided(keyId: keyA))
        try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD3), party: "again", rederivable: true)
        #expect(try store.decision(keyId: keyA, gen: bytes32(1)) == nil)
        // Another gen is still a conflict.
        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 1, digest: 0xD4), party: "x", rederivable: true) }
                == .preparedConflict(keyId: keyA))
        try store.commit(keyId: keyA, gen: bytes32(1), digest: bytes32(0xD3), party: "app", owner: "test-owner")
        #expect(try store.share(keyId: keyA)?.gen == bytes32(1))
        // A committed gen is never reopened.
        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD5), party: "y", rederivable: true) }
                == .alreadyDecided(keyId: keyA))
    }
}
