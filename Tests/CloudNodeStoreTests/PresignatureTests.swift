import Foundation
import MPCCrypto
import Synchronization
import Testing
@testable import CloudNode
import SilentShardCore

@Suite("NodeShareStore: presignatures single use, bans, audit log")
struct PresignatureTests {
    func presignature(_ id: UInt8, gen: UInt8 = 1, expiresIn: TimeInterval = 3600, deviceKey: [UInt8] = device) -> NodePresignature {
        NodePresignature(id: bytes32(id), keyId: keyA, gen: bytes32(gen), party: 1, deviceKey: deviceKey,
                         expiresAt: Date().addingTimeInterval(expiresIn), secret: secretShare(id, count: 160))
    }

    @Test("consume: finish once, replay the same request, refuse another, unknown id", arguments: StoreBackend.allCases)
    func singleUse(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.storePresignature(presignature(1))
        let first = try store.consumePresignature(id: bytes32(1), requestHash: bytes32(0xA1)) { secret, row in
            #expect(secret == secretShare(1, count: 160))
            #expect(row.keyId == keyA)
            return [1, 2, 3]
        }
        #expect(first == .finished(response: [1, 2, 3]))
        #expect(try store.presignatureCount(keyId: keyA) == 0)
        let replay = try store.consumePresignature(id: bytes32(1), requestHash: bytes32(0xA1)) { _, _ in
            Issue.record("finish must not run on a replay")
            return []
        }
        #expect(replay == .replayed(response: [1, 2, 3]))
        #expect(nodeError { try store.consumePresignature(id: bytes32(1), requestHash: bytes32(0xA2)) { _, _ in [9] } } == .presignatureConsumed)
        #expect(nodeError { try store.consumePresignature(id: bytes32(2), requestHash: bytes32(0xA2)) { _, _ in [9] } } == .presignatureNotFound)
        #expect(nodeError { try store.storePresignature(presignature(1)) } == .duplicatePresignature)
    }

    @Test("a failing finish rolls back: the row stays and the finish's own error comes out", arguments: StoreBackend.allCases)
    func finishFailureRollsBack(_ backend: StoreBackend) throws {
        struct BadAuthenticator: Error {}
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.storePresignature(presignature(3))
        #expect(throws: BadAuthenticator.self) {
            try store.consumePresignature(id: bytes32(3), requestHash: bytes32(0xA3)) { _, _ in throw BadAuthenticator() }
        }
        #expect(try store.presignatureCount(keyId: keyA) == 1)
        #expect(try store.consumePresignature(id: bytes32(3), requestHash: bytes32(0xA4)) { _, _ in [4] } == .finished(response: [4]))
    }

    @Test("expired, stale-generation, over-quota and tampered presignatures are refused", arguments: StoreBackend.allCases)
    func refusals(_ backend: StoreBackend) throws {
        let clock = LockedValue(Date())
        let store = try storeWithCommittedKey(scratchLocation(backend), clock: { clock.withLock { $0 } })
        try store.storePresignature(presignature(4, expiresIn: 60))
        clock.withLock { $0 = $0.addingTimeInterval(120) }
        #expect(nodeError { try store.consumePresignature(id: bytes32(4), requestHash: bytes32(1)) { _, _ in [1] } } == .presignatureExpired)
        #expect(try store.presignatureCount(keyId: keyA) == 1)
        #expect(try store.purgeExpired() == 1)
        #expect(nodeError { try store.consumePresignature(id: bytes32(4), requestHash: bytes32(1)) { _, _ in [1] } } == .presignatureNotFound)
        clock.withLock { $0 = Date() }

        #expect(nodeError { try store.storePresignature(presignature(5, gen: 9)) } == .staleGeneration(keyId: keyA))

        // A refresh commit deletes the old generation's presignatures.
        try store.storePresignature(presignature(6))
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner")
        #expect(try store.presignatureCount(keyId: keyA) == 0)

        let limited = try NodeShareStore(location: scratchLocation(backend), masterKey: .random(), presignatureLimit: 2)
        try limited.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "test-owner")
        try limited.storePresignature(presignature(7))
        try limited.storePresignature(presignature(8))
        #expect(nodeError { try limited.storePresignature(presignature(9)) } == .presignatureLimit(keyId: keyA))
    }

    @Test("a tampered presignature row fails authentication and is not consumed", arguments: StoreBackend.allCases)
    func tamperedRow(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        try store.storePresignature(presignature(10))
        let tamper = "UPDATE presignatures SET expires_at = expires_at + 86400"
        try rawExecute(location, sqlite: tamper, postgres: tamper)
        #expect(nodeError { try store.consumePresignature(id: bytes32(10), requestHash: bytes32(1)) { _, _ in [1] } } == .integrityFailure(keyId: keyA))
        #expect(try store.presignatureCount(keyId: keyA) == 1)
    }

    @Test("50 concurrent consumers on separate connections (separate store instances): exactly one finishes",
          arguments: StoreBackend.allCases)
    func concurrentConsumers(_ backend: StoreBackend) async throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        let masterKey = store.masterKey
        try store.storePresignature(presignature(20))
        let consumers = try (0..<50).map { _ in try NodeShareStore(location: location, masterKey: masterKey) }
        let finishes = Atomic<Int>(0)

        // Real threads (the cooperative pool has only as many threads as cores), released together.
        let outcomes = LockedValue<[String]>([])
        let start = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for (index, consumer) in consumers.enumerated() {
            done.enter()
            Thread.detachNewThread {
                start.wait()
                let outcome: String
                do {
                    let result = try consumer.consumePresignature(id: bytes32(20), requestHash: bytes32(UInt8(index))) { _, _ in
                        finishes.add(1, ordering: .sequentiallyConsistent)
                        return [UInt8(index)]
                    }
                    outcome = if case .finished = result { "finished" } else { "replayed" }
                } catch let error as NodeStoreError {
                    outcome = error == .presignatureConsumed ? "consumed" : "error \(error)"
                } catch {
                    outcome = "other \(error)"
                }
                outcomes.withLock { $0.append(outcome) }
                done.leave()
            }
        }
        for _ in consumers { start.signal() }
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async {
                done.wait()
                continuation.resume()
            }
        }
        let all = outcomes.withLock { $0 }
        #expect(all.count == 50)
        #expect(all.filter { $0 == "finished" }.count == 1, "\(Set(all))")
        #expect(all.filter { $0 == "consumed" }.count == 49, "\(Set(all))")
        #expect(finishes.load(ordering: .sequentiallyConsistent) == 1)
        #expect(try store.presignatureCount(keyId: keyA) == 0)
    }

    // No variant with 50 Swift tasks: the store's calls block (SQLite waits for its lock), and 50 of
    // them on the cooperative pool (one thread per core) starved every other test in the process for
    // seconds. The node must call the store from its own threads, never from the cooperative pool.

    @Test("ban: deletes the device's presignatures, blocks store and consume; operator lifts it", arguments: StoreBackend.allCases)
    func bans(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        let other = [UInt8](repeating: 0xD2, count: 32)
        try store.storePresignature(presignature(30))
        try store.storePresignature(presignature(31, deviceKey: other))
        #expect(try store.ban(deviceKey: device, reason: "dkls23 consistency check", instanceId: bytes32(0x11), party: "node 1") == 1)
        #expect(try store.isBanned(deviceKey: device))
        #expect(try !store.isBanned(deviceKey: other))
        #expect(try store.ban(deviceKey: device)?.reason == "dkls23 consistency check")
        #expect(try store.presignatureCount(keyId: keyA) == 1)
        #expect(nodeError { try store.storePresignature(presignature(32)) } == .banned)

        // A ban raised after a presignature was stored also blocks its consumption.
        try store.ban(deviceKey: other, reason: "r", instanceId: bytes32(0x12), party: "node 1")
        #expect(try store.presignatureCount(keyId: keyA) == 0)

        #expect(try store.liftBan(deviceKey: device, operator: "alice"))
        #expect(try !store.isBanned(deviceKey: device))
        #expect(try !store.liftBan(deviceKey: device, operator: "alice"))
        try store.storePresignature(presignature(33))
        let log = try store.auditLog()
        #expect(log.contains { $0.operation == "lift ban" && $0.party == "operator alice" })
        #expect(log.contains { $0.operation == "ban" })
    }

    @Test("the audit log records operations and never holds secret bytes", arguments: StoreBackend.allCases)
    func auditLog(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        let store = try storeWithCommittedKey(location)
        try store.storePresignature(presignature(40))
        _ = try store.consumePresignature(id: bytes32(40), requestHash: bytes32(1)) { _, _ in [7] }
        _ = nodeError { try store.consumePresignature(id: bytes32(40), requestHash: bytes32(2)) { _, _ in [7] } }
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.abort(keyId: keyA, gen: bytes32(2), party: "app")

        let log = try store.auditLog(keyId: keyA)
        #expect(log.map(\.operation) == ["prepare", "commit", "presign store", "presign final", "presign final", "prepare", "abort"])
        #expect(log.map(\.outcome).contains("consumed"))
        #expect(log.last?.outcome == "aborted")
        #expect(log.allSatisfy { $0.keyId == keyA })

        let text = log.map { "\($0)" }.joined(separator: "\n")
        let secrets = [secretShare(1), secretShare(2), secretShare(40, count: 160)]
        for secret in secrets {
            #expect(!text.contains(hex(Array(secret.prefix(8)))))
            #expect(!text.contains(Array(secret.prefix(8)).map(String.init).joined(separator: ", ")))
        }
        // Nor in the raw audit table.
        guard case .sqlite(let path) = location else { return }  // PostgreSQL: the same rows, read above
        let raw = try SQLiteConnection(path: path)
        let statement = try raw.prepare("SELECT group_concat(coalesce(key_id,'') || coalesce(party,'') || operation || outcome, '|') FROM audit_log")
        _ = try statement.step()
        let table = Array(try statement.text(0).utf8)
        for secret in secrets { #expect(!table.contains(run: Array(secret.prefix(8)))) }
    }

    @Test("latency figures: commit and consume (SQLite synchronous = FULL; PostgreSQL) (printed)",
          arguments: StoreBackend.allCases)
    func latency(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: scratchLocation(backend), masterKey: .random())
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: nil, party: "app", owner: "test-owner")
        let rounds = 40
        var clock = ContinuousClock.now
        for round in 0..<rounds {
            let gen = bytes32(UInt8(round + 2))
            try store.prepare(keyId: keyA, share: NodeKeyshare(gen: gen, kind: .ecdsa, bytes: secretShare(1, count: 4096), digest: gen), party: "n")
            try store.commit(keyId: keyA, gen: gen, digest: gen, party: "app", owner: "test-owner")
        }
        let commitTime = (ContinuousClock.now - clock) / (rounds * 2)
        for round in 0..<rounds {
            try store.storePresignature(NodePresignature(id: bytes32(UInt8(round)), keyId: keyA, gen: bytes32(UInt8(rounds + 1)),
                                                         party: 1, deviceKey: device, expiresAt: Date().addingTimeInterval(600),
                                                         secret: secretShare(3, count: 256)))
        }
        clock = ContinuousClock.now
        for round in 0..<rounds {
            _ = try store.consumePresignature(id: bytes32(UInt8(round)), requestHash: bytes32(1)) { _, _ in [1] }
        }
        let consumeTime = (ContinuousClock.now - clock) / rounds
        print("node store latency (\(backend)): prepare/commit transaction \(commitTime), consume transaction \(consumeTime)")
    }
}
