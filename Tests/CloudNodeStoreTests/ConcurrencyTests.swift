import MPCCrypto
import Foundation
import Synchronization
import SilentShardTestSupport
import Testing
@testable import CloudNode
import SilentShardCore

/// Races between store instances sharing one database — each instance is its own connection, as
/// separate node processes are. On SQLite the database lock serializes them; on PostgreSQL the
/// advisory locks, row locks and unique keys must (READ COMMITTED would otherwise let them interleave).
@Suite("Node share store: races between instances sharing one database (SQLite and PostgreSQL)")
struct ConcurrencyTests {
    /// `count` instances on `location`, all with `masterKey`.
    func instances(_ count: Int, _ location: NodeStoreLocation, _ masterKey: NodeMasterKey, presignatureLimit: Int = 100,
                   clock: @escaping @Sendable () -> Date = { Date() }) throws -> [NodeShareStore] {
        try (0..<count).map { _ in
            try NodeShareStore(location: location, masterKey: masterKey, presignatureLimit: presignatureLimit, clock: clock)
        }
    }

    @Test("concurrent compare-and-swap commits on one key: one wins, the others get currentChanged, no share lost",
          arguments: StoreBackend.allCases)
    func concurrentDirectCommits(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)  // CURRENT gen 1
        let racers = try instances(8, location, store.masterKey)
        let outcomes = LockedValue<[Int: String]>([:])
        await onThreads(racers.count) { index in
            let outcome: String
            do {
                try racers[index].commitDirectly(keyId: keyA, share: keyshare(gen: UInt8(10 + index), seed: UInt8(10 + index)),
                                                 replacing: bytes32(1), party: "app \(index)", owner: "test-owner")
                outcome = "committed"
            } catch let error as NodeStoreError {
                outcome = error == .currentChanged(keyId: keyA) ? "changed" : "error \(error)"
            } catch {
                outcome = "other \(error)"
            }
            outcomes.withLock { $0[index] = outcome }
        }
        let all = outcomes.withLock { $0 }
        let winners = all.filter { $0.value == "committed" }.map(\.key)
        #expect(winners.count == 1, "\(all)")
        #expect(all.filter { $0.value == "changed" }.count == racers.count - 1, "\(all)")
        let winner = try #require(winners.first)
        // The winner's share is CURRENT, readable by every instance; no loser's generation is decided.
        for reader in [store] + racers {
            #expect(try reader.share(keyId: keyA) == keyshare(gen: UInt8(10 + winner), seed: UInt8(10 + winner)))
        }
        for index in 0..<racers.count {
            #expect(try store.decision(keyId: keyA, gen: bytes32(UInt8(10 + index))) == (index == winner ? .committed : nil))
        }
        #expect(try store.keyCount() == 1)
    }

    @Test("concurrent prepares of different generations: exactly one is staged, the others get preparedConflict",
          arguments: StoreBackend.allCases)
    func concurrentPrepares(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        let racers = try instances(6, location, store.masterKey)
        let prepared = LockedValue<[UInt8]>([])
        let conflicts = Atomic<Int>(0)
        await onThreads(racers.count) { index in
            let gen = UInt8(20 + index)
            do {
                try racers[index].prepare(keyId: keyA, share: keyshare(gen: gen, seed: gen, digest: gen), party: "node")
                prepared.withLock { $0.append(gen) }
            } catch let error as NodeStoreError where error == .preparedConflict(keyId: keyA) {
                conflicts.add(1, ordering: .sequentiallyConsistent)
            } catch {}
        }
        let winners = prepared.withLock { $0 }
        #expect(winners.count == 1)
        #expect(conflicts.load(ordering: .sequentiallyConsistent) == racers.count - 1)
        let gen = try #require(winners.first)
        #expect(try store.share(keyId: keyA, slot: .prepared) == keyshare(gen: gen, seed: gen, digest: gen))
        try racers[0].commit(keyId: keyA, gen: bytes32(gen), digest: bytes32(gen), party: "app", owner: "test-owner")
        #expect(try store.share(keyId: keyA) == keyshare(gen: gen, seed: gen, digest: gen))
    }

    @Test("lease contention: of many instances asking for one key's lease at once, exactly one gets it",
          arguments: StoreBackend.allCases)
    func leaseContention(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        // A fixed clock: the lease must not expire however slowly the machine runs the race.
        let clock: @Sendable () -> Date = { Date(timeIntervalSince1970: 2_000_000_000) }
        let store = try NodeShareStore(location: location, masterKey: .random(), clock: clock)
        let racers = try instances(16, location, store.masterKey, clock: clock)
        let holders = LockedValue<[Int]>([])
        let failures = LockedValue<[String]>([])
        await onThreads(racers.count) { index in
            do {
                try racers[index].acquireLease(keyId: keyA, holder: bytes32(UInt8(index + 1)), seconds: 60)
                holders.withLock { $0.append(index) }
            } catch let error as NodeStoreError where error == .keyBusy(keyId: keyA) {
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let winner = try #require(holders.withLock { $0 }.first)
        #expect(holders.withLock { $0.count } == 1)
        // The lease is the winner's: anyone else is refused until it is released.
        #expect(nodeError { try store.acquireLease(keyId: keyA, holder: bytes32(0xEE), seconds: 60) } == .keyBusy(keyId: keyA))
        try racers[winner].releaseLease(keyId: keyA, holder: bytes32(UInt8(winner + 1)))
        try store.acquireLease(keyId: keyA, holder: bytes32(0xEE), seconds: 60)
    }

    @Test("replay insert race: one session id recorded by many instances at once succeeds exactly once",
          arguments: StoreBackend.allCases)
    func replayRace(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let store = try NodeShareStore(location: location, masterKey: .random())
        let racers = try instances(16, location, store.masterKey)
        let accepted = Atomic<Int>(0)
        let replays = Atomic<Int>(0)
        await onThreads(racers.count) { index in
            do {
                try racers[index].recordSessionInstance(InstanceID(checked: bytes32(0x5A)), nowMilliseconds: 1_000, retentionMilliseconds: 60_000)
                accepted.add(1, ordering: .sequentiallyConsistent)
            } catch let error as NodeStoreError where error == .replay {
                replays.add(1, ordering: .sequentiallyConsistent)
            } catch {}
        }
        #expect(accepted.load(ordering: .sequentiallyConsistent) == 1)
        #expect(replays.load(ordering: .sequentiallyConsistent) == racers.count - 1)
        // Expired ids are forgotten: the same id after its retention is accepted again, once.
        try store.recordSessionInstance(InstanceID(checked: bytes32(0x5A)), nowMilliseconds: 61_000, retentionMilliseconds: 60_000)
        #expect(nodeError { try store.recordSessionInstance(InstanceID(checked: bytes32(0x5A)), nowMilliseconds: 61_001, retentionMilliseconds: 1) } == .replay)
    }

    @Test("the presignature quota holds when many instances store for one key at once", arguments: StoreBackend.allCases)
    func quotaUnderConcurrency(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location, presignatureLimit: 5)
        let racers = try instances(12, location, store.masterKey, presignatureLimit: 5)
        let stored = Atomic<Int>(0)
        await onThreads(racers.count) { index in
            let presignature = NodePresignature(id: bytes32(UInt8(100 + index)), keyId: keyA, gen: bytes32(1), party: 1,
                                                deviceKey: device, expiresAt: Date().addingTimeInterval(86_400),
                                                secret: secretShare(UInt8(index), count: 64))
            if (try? racers[index].storePresignature(presignature)) != nil { stored.add(1, ordering: .sequentiallyConsistent) }
        }
        #expect(stored.load(ordering: .sequentiallyConsistent) == 5)
        #expect(try store.presignatureCount(keyId: keyA) == 5)
    }

    @Test("migrations: instances opening a fresh database at once apply each migration exactly once",
          arguments: StoreBackend.allCases)
    func concurrentMigrations(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let masterKey = NodeMasterKey.random()
        let opened = LockedValue<[NodeShareStore]>([])
        let failures = LockedValue<[String]>([])
        await onThreads(8) { _ in
            do {
                let store = try NodeShareStore(location: location, masterKey: masterKey)
                opened.withLock { $0.append(store) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0 })")
        let stores = opened.withLock { $0 }
        #expect(stores.count == 8)
        let first = try #require(stores.first)
        let versions = try first.reading { db throws(NodeStoreError) in
            try db.query("SELECT version FROM schema_migrations ORDER BY version", []).map { row throws(NodeStoreError) in try row.integer(0) }
        }
        #expect(versions == NodeStoreMigrations.all.map { Int64($0.version) })
        let checks = try first.reading { db throws(NodeStoreError) in
            try db.first("SELECT count(*) FROM meta WHERE name = 'key_check'", [])?.integer(0)
        }
        #expect(checks == 1)
        // Every instance works on the same schema.
        try first.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "test-owner")
        for store in stores { #expect(try store.share(keyId: keyA) == keyshare(gen: 1, seed: 1)) }
    }

    @Test("one instance, many threads (PostgreSQL: a connection pool): one presignature, exactly one finish",
          arguments: StoreBackend.allCases)
    func oneInstanceManyThreads(_ backend: StoreBackend) async throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.storePresignature(NodePresignature(id: bytes32(0x44), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: Date().addingTimeInterval(86_400), secret: secretShare(4, count: 64)))
        let finished = Atomic<Int>(0)
        let consumed = Atomic<Int>(0)
        await onThreads(24) { index in
            do {
                let result = try store.consumePresignature(id: bytes32(0x44), requestHash: bytes32(UInt8(index))) { _, _ in [1] }
                if case .finished = result { finished.add(1, ordering: .sequentiallyConsistent) }
            } catch let error as NodeStoreError where error == .presignatureConsumed {
                consumed.add(1, ordering: .sequentiallyConsistent)
            } catch {}
        }
        #expect(finished.load(ordering: .sequentiallyConsistent) == 1)
        #expect(consumed.load(ordering: .sequentiallyConsistent) == 23)
    }

    @Test("PostgreSQL: a connection the server dropped is re-established on its next use")
    func reconnectsAfterTheServerDropsTheConnection() throws {
        let location = try scratchLocation(.postgres)
        guard case .postgres(let url) = location else { return }
        let store = try storeWithCommittedKey(location)
        let admin = try PostgresConnection(conninfo: url)
        // The server terminates the store's connections (its application_name is the test's schema).
        let terminate = "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
            + "AND application_name = current_schema()"
        #expect(try admin.query(terminate, []).rows.count == 2)  // the store's connection and its replay connection
        #expect(try store.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        #expect(try admin.query(terminate, []).rows.count >= 1)  // the reconnected store connection
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 2, seed: 2), replacing: bytes32(1), party: "app", owner: "test-owner")
        #expect(try admin.query(terminate, []).rows.count >= 1)
        try store.recordSessionInstance(InstanceID(checked: bytes32(9)), nowMilliseconds: 1, retentionMilliseconds: 1000)
        #expect(try store.share(keyId: keyA) == keyshare(gen: 2, seed: 2))
    }

    @Test("PostgreSQL: a real deadlock between two transactions is retried when the body is retryable, not otherwise")
    func deadlockRetry() async throws {
        let location = try scratchLocation(.postgres)
        guard case .postgres(let url) = location else { return }
        _ = try NodeShareStore(location: location, masterKey: .random())  // the schema
        let setup = try PostgresConnection(conninfo: url)
        try setup.execute("CREATE TABLE pair (k BIGINT PRIMARY KEY, v BIGINT NOT NULL); INSERT INTO pair VALUES (1, 0), (2, 0)")
        let first = try PostgresStoreDatabase(url: url), second = try PostgresStoreDatabase(url: url)
        // Each locks one row, waits until the other has locked its row, then wants the other's: a
        // deadlock the server breaks by failing one of them with 40P01; the retried one then succeeds.
        let bothLocked = DispatchGroup()
        bothLocked.enter()
        bothLocked.enter()
        let attempts = LockedValue<[Int]>([0, 0])
        let results = LockedValue<[String]>([])
        await onThreads(2) { index in
            let database = index == 0 ? first : second
            let (mine, theirs): (Int64, Int64) = index == 0 ? (1, 2) : (2, 1)
            do {
                try database.transaction(retryable: index == 0) { db throws(NodeStoreError) in
                    let attempt = attempts.withLock { $0[index] += 1; return $0[index] }
                    try db.run("UPDATE pair SET v = v + 1 WHERE k = ?", [.integer(mine)])
                    if attempt == 1 {
                        bothLocked.leave()
                        bothLocked.wait()
                    }
                    try db.run("UPDATE pair SET v = v + 1 WHERE k = ?", [.integer(theirs)])
                }
                results.withLock { $0.append("\(index) committed") }
            } catch {
                results.withLock { $0.append("\(index) \(error)") }
            }
        }
        let outcome = results.withLock { $0 }
        let counts = attempts.withLock { $0 }
        // The retryable transaction (0) always ends committed: when it is the deadlock victim it runs
        // again. The other (1) commits, or fails with 40P01 after one attempt when it is a victim — also
        // possible after 0's retry, if 0 re-locked its row before 1 was woken (a second deadlock).
        #expect(outcome.contains("0 committed"), "\(outcome)")
        #expect(counts[0] >= 1 && counts[1] == 1, "\(counts)")
        #expect(outcome.contains("1 committed") || outcome.contains { $0.hasPrefix("1 ") && $0.contains("40P01") }, "\(outcome)")
        #expect(counts[0] >= 2 || outcome.contains { $0.hasPrefix("1 ") && $0.contains("40P01") },
                "someone was the deadlock victim: \(outcome) \(counts)")
    }

    @Test("a database migrated by a newer build is refused", arguments: StoreBackend.allCases)
    func schemaTooNew(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        _ = try NodeShareStore(location: location, masterKey: .random())
        let insert = "INSERT INTO schema_migrations (version, applied_at) VALUES (999, 0)"
        try rawExecute(location, sqlite: insert, postgres: insert)
        #expect(nodeError { try NodeShareStore(location: location, masterKey: .random()) } == .schemaTooNew(version: 999))
    }
}
