import CSQLite
import Foundation
import Testing
@testable import CloudNode
import MPCCrypto
@_spi(InProcess) import MPCProtocols
import SilentShardCore

@Suite("NodeShareStore: keyshares, commit/abort, encryption at rest, crash safety")
struct NodeShareTests {
    @Test("prepare keeps CURRENT; commit promotes and logs; a retried commit is a no-op", arguments: StoreBackend.allCases)
    func prepareCommit(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        #expect(try store.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")  // idempotent
        #expect(try store.status(keyId: keyA) == NodeKeyStatus(currentGen: bytes32(1), preparedGen: bytes32(2), preparedDigest: bytes32(0xD2)))
        #expect(try store.share(keyId: keyA)?.gen == bytes32(1))
        #expect(try store.share(keyId: keyA, slot: .prepared) == keyshare(gen: 2, seed: 2, digest: 0xD2))

        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 3, seed: 3, digest: 0xD3), party: "x") } == .preparedConflict(keyId: keyA))
        #expect(nodeError { try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xEE), party: "app", owner: "test-owner") } == .preparedMismatch(keyId: keyA))

        try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner")
        try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner")
        #expect(try store.status(keyId: keyA) == NodeKeyStatus(currentGen: bytes32(2)))
        #expect(try store.share(keyId: keyA) == keyshare(gen: 2, seed: 2, digest: 0xD2))
        #expect(try store.decision(keyId: keyA, gen: bytes32(2)) == .committed)
        #expect(nodeError { try store.abort(keyId: keyA, gen: bytes32(2), party: "app") } == .alreadyDecided(keyId: keyA))
    }

    @Test("abort drops PREPARED and tombstones the gen; it cannot be prepared again", arguments: StoreBackend.allCases)
    func abort(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        try store.abort(keyId: keyA, gen: bytes32(2), party: "app")
        try store.abort(keyId: keyA, gen: bytes32(2), party: "app")
        #expect(try store.status(keyId: keyA) == NodeKeyStatus(currentGen: bytes32(1)))
        #expect(try store.decision(keyId: keyA, gen: bytes32(2)) == .aborted)
        #expect(nodeError { try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "x") } == .alreadyDecided(keyId: keyA))
        #expect(nodeError { try store.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app", owner: "test-owner") } == .alreadyDecided(keyId: keyA))
    }

    @Test("duo direct commit replaces CURRENT in one step", arguments: StoreBackend.allCases)
    func commitDirectly(_ backend: StoreBackend) throws {
        let store = try storeWithCommittedKey(scratchLocation(backend))
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 5, seed: 5), replacing: bytes32(1), party: "app", owner: "test-owner")
        try store.commitDirectly(keyId: keyA, share: keyshare(gen: 5, seed: 5), replacing: bytes32(1), party: "app", owner: "test-owner")
        #expect(nodeError { try store.commitDirectly(keyId: keyA, share: keyshare(gen: 1, seed: 1), replacing: bytes32(1), party: "app", owner: "test-owner") } == .alreadyDecided(keyId: keyA))
        #expect(try store.share(keyId: keyA) == keyshare(gen: 5, seed: 5))
        #expect(try store.decision(keyId: keyA, gen: bytes32(5)) == .committed)
    }

    @Test("raw database bytes never contain a plaintext share or presignature secret")
    func encryptedAtRest() throws {
        let path = scratchPath()
        let store = try storeWithCommittedKey(path: path)
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        let presigSecret = secretShare(77, count: 200)
        try store.storePresignature(NodePresignature(id: bytes32(0x77), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: Date().addingTimeInterval(3600), secret: presigSecret))
        let raw = rawDatabaseBytes(path)
        #expect(raw.count > 4096)
        for secret in [secretShare(1), secretShare(2), presigSecret] {
            #expect(!raw.contains(run: Array(secret.prefix(16))))
            #expect(!raw.contains(run: Array(secret.suffix(16))))
        }
        #expect(try store.share(keyId: keyA, slot: .prepared)?.bytes == secretShare(2))
    }

    @Test("PostgreSQL: no table row holds a plaintext share or presignature secret")
    func encryptedAtRestOnPostgres() throws {
        let location = try scratchLocation(.postgres)
        guard case .postgres(let url) = location else { return }
        let store = try storeWithCommittedKey(location)
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        let presigSecret = secretShare(77, count: 200)
        try store.storePresignature(NodePresignature(id: bytes32(0x77), keyId: keyA, gen: bytes32(1), party: 1, deviceKey: device,
                                                     expiresAt: Date().addingTimeInterval(3600), secret: presigSecret))
        // Every row of every table as text (bytea as hex).
        let raw = try PostgresConnection(conninfo: url)
        var dump = ""
        for table in ["meta", "keyshares", "decisions", "presignatures", "finish_records", "bans", "seen_instances",
                      "key_owners", "leases", "audit_log", "schema_migrations"] {
            for row in try raw.query("SELECT t::text FROM \(table) t", []).rows {
                if case .text(let text) = row.first { dump += text + "\n" }
            }
        }
        #expect(dump.contains(hex(bytes32(1))))  // public columns are there (gen)
        for secret in [secretShare(1), secretShare(2), presigSecret] {
            #expect(!dump.contains(hex(Array(secret.prefix(16)))))
            #expect(!dump.contains(hex(Array(secret.suffix(16)))))
        }
        #expect(try store.share(keyId: keyA, slot: .prepared)?.bytes == secretShare(2))
    }

    @Test("rows swapped between key ids, slots or generations fail authentication")
    func rowSwap() throws {
        let path = scratchPath()
        let store = try storeWithCommittedKey(path: path)
        try store.prepare(keyId: keyB, share: keyshare(gen: 9, seed: 9, digest: 0xD9), party: "node 1")
        try store.commit(keyId: keyB, gen: bytes32(9), digest: bytes32(0xD9), party: "app", owner: "test-owner")
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")
        let raw = try SQLiteConnection(path: path)

        // Key A's CURRENT ciphertext copied into key B's CURRENT row.
        try raw.run("""
            UPDATE keyshares SET (nonce, sealed) = (SELECT nonce, sealed FROM keyshares WHERE key_id = ?1 AND slot = 1)
            WHERE key_id = ?2 AND slot = 1
            """, [.text(keyA), .text(keyB)])
        #expect(nodeError { try store.share(keyId: keyB) } == .integrityFailure(keyId: keyB))

        // Key A's PREPARED and CURRENT slots exchanged.
        try raw.run("UPDATE keyshares SET slot = 3 WHERE key_id = ? AND slot = 1", [.text(keyA)])
        try raw.run("UPDATE keyshares SET slot = 1 WHERE key_id = ? AND slot = 2", [.text(keyA)])
        try raw.run("UPDATE keyshares SET slot = 2 WHERE key_id = ? AND slot = 3", [.text(keyA)])
        #expect(nodeError { try store.share(keyId: keyA) } == .integrityFailure(keyId: keyA))
        #expect(nodeError { try store.share(keyId: keyA, slot: .prepared) } == .integrityFailure(keyId: keyA))
    }

    @Test("malformed rows are typed errors, never traps")
    func corruptRows() throws {
        let path = scratchPath()
        let store = try storeWithCommittedKey(path: path)
        let raw = try SQLiteConnection(path: path)
        try raw.run("UPDATE keyshares SET sealed = 'text' WHERE key_id = ?", [.text(keyA)])
        guard case .corrupt? = nodeError({ try store.share(keyId: keyA) }) else {
            Issue.record("text in a blob column not detected")
            return
        }
        try raw.run("UPDATE keyshares SET sealed = x'00', nonce = x'01' WHERE key_id = ?", [.text(keyA)])
        #expect(nodeError { try store.share(keyId: keyA) } == .integrityFailure(keyId: keyA))
        try raw.run("UPDATE keyshares SET kind = 999 WHERE key_id = ?", [.text(keyA)])
        #expect(nodeError { try store.share(keyId: keyA) } == .integrityFailure(keyId: keyA))
    }

    @Test("another master key cannot open the database", arguments: StoreBackend.allCases)
    func wrongMasterKeyOnBoth(_ backend: StoreBackend) throws {
        let location = try scratchLocation(backend)
        _ = try storeWithCommittedKey(location)
        #expect(nodeError { try NodeShareStore(location: location, masterKey: .random()) } == .wrongMasterKey)
    }

    @Test("another master key cannot open the database; a non-database file is a typed error")
    func wrongMasterKey() throws {
        let path = scratchPath()
        _ = try storeWithCommittedKey(path: path)
        #expect(nodeError { try NodeShareStore(path: path, masterKey: .random()) } == .wrongMasterKey)
        let garbage = scratchPath()
        try Data(repeating: 0x33, count: 8192).write(to: URL(fileURLWithPath: garbage))
        guard case .corrupt? = nodeError({ try NodeShareStore(path: garbage, masterKey: .random()) }) else {
            Issue.record("garbage file not reported as corrupt")
            return
        }
    }

    @Test("invalid key ids and argument sizes are rejected", arguments: StoreBackend.allCases)
    func invalidArguments(_ backend: StoreBackend) throws {
        let store = try NodeShareStore(location: scratchLocation(backend), masterKey: .random())
        for bad in ["", "../x", "~ss/ban/00", "abc", "a/b"] {
            #expect(nodeError { try store.share(keyId: bad) } == .invalidKeyId)
        }
        #expect(nodeError { try store.prepare(keyId: keyA, share: NodeKeyshare(gen: [1], kind: .ecdsa, bytes: [1], digest: bytes32(1)), party: "x") }
                == .invalidArgument("gen must be 32 bytes"))
    }

    @Test("crash between stage and promote: reopening shows the PREPARED share intact for reconcile")
    func crashBetweenStageAndPromote() throws {
        let path = scratchPath()
        let masterKey = NodeMasterKey.random()
        let store = try storeWithCommittedKey(path: path, masterKey: masterKey)
        try store.prepare(keyId: keyA, share: keyshare(gen: 2, seed: 2, digest: 0xD2), party: "node 1")

        // An in-flight, uncommitted transaction at the moment of the crash (another connection).
        let other = try SQLiteConnection(path: path)
        try other.execute("BEGIN IMMEDIATE")
        try other.run("DELETE FROM keyshares")

        // "Crash": snapshot the files as they are on disk now (database, WAL, shared memory), with
        // both connections still open and nothing checkpointed, and open the copy as a fresh process would.
        let crashed = scratchPath("crashed.sqlite")
        for suffix in ["", "-wal"] where FileManager.default.fileExists(atPath: path + suffix) {
            try FileManager.default.copyItem(atPath: path + suffix, toPath: crashed + suffix)
        }
        try other.execute("ROLLBACK")

        let reopened = try NodeShareStore(path: crashed, masterKey: masterKey)
        #expect(try reopened.status(keyId: keyA) == NodeKeyStatus(currentGen: bytes32(1), preparedGen: bytes32(2), preparedDigest: bytes32(0xD2)))
        #expect(try reopened.share(keyId: keyA) == keyshare(gen: 1, seed: 1, digest: 0xD0))
        #expect(try reopened.share(keyId: keyA, slot: .prepared) == keyshare(gen: 2, seed: 2, digest: 0xD2))
        // Reconcile can finish the commit on the reopened store.
        try reopened.commit(keyId: keyA, gen: bytes32(2), digest: bytes32(0xD2), party: "app reconcile", owner: "test-owner")
        #expect(try reopened.share(keyId: keyA) == keyshare(gen: 2, seed: 2, digest: 0xD2))
    }

    @Test("database file is 0600")
    func permissions() throws {
        let path = scratchPath()
        _ = try NodeShareStore(path: path, masterKey: .random())
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test("master key and keyshares describe themselves without bytes")
    func redaction() throws {
        let key = try NodeMasterKey(bytes: bytes32(0xAB))
        #expect(!"\(key)".contains("171") && !String(reflecting: key).lowercased().contains("ab, "))
        var dumped = ""
        dump(keyshare(gen: 1, seed: 1), to: &dumped)
        #expect(!dumped.contains("\(secretShare(1)[0])"))
    }
}

@Suite("Real keyshares in the node store")
struct NodeDKLsKeyshareTests {
    @Test("the node's DKLs23 share round-trips sealed, keyed by its key id and generation", arguments: StoreBackend.allCases)
    func dklsKeyshare(_ backend: StoreBackend) throws {
        var rng = DeterministicRandom(seed: 24)
        let node = try DKLsInProcess.keygen(partyCount: 2, threshold: 2, using: &rng)[1]
        let keyId = Hex.encode(node.keyId)
        let digest = SHA256.hash(node.generation)
        let store = try NodeShareStore(location: scratchLocation(backend), masterKey: .random())
        try store.prepare(keyId: keyId, share: NodeKeyshare(gen: node.generation, kind: .ecdsa, bytes: node.serialized(), digest: digest),
                          party: "node 1")
        try store.commit(keyId: keyId, gen: node.generation, digest: digest, party: "app", owner: "test-owner")
        let loaded = try #require(try store.share(keyId: keyId))
        #expect(try DKLsKeyshare(serialized: loaded.bytes).serialized() == node.serialized())
    }
}
