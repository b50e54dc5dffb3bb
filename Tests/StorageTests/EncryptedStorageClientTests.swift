import Foundation
import MPCCrypto
import Testing
@testable import SilentShardCore

/// One encrypted store under test, over fresh storage.
struct EncryptedFixture {
    /// The client under test.
    let store: any StorageClient
    /// The sealed records as stored (for looking at ciphertext and tampering with it).
    let sealed: any StorageClient
    /// A new client over the same storage and key, as after the app crashed and relaunched.
    let reopen: () throws -> any StorageClient
    /// A new client over the same records whose key is another one.
    let rekeyed: () throws -> any StorageClient
    /// A new client over the same storage whose writes fail before they commit (a crash mid-write).
    let crashing: () throws -> any StorageClient
}

/// The encrypted stores: `EncryptedStorageClient` over each built-in, and `KeychainStorageClient` over
/// the Keychain double (the same code the Apple build runs, less `SecurityKeychainItemStore`).
enum EncryptedBackend: String, CaseIterable, CustomTestStringConvertible {
    case memory, file, sqlite, keychain, keychainSealed

    var testDescription: String { rawValue }

    func fixture() throws -> EncryptedFixture {
        let key = FixedKeyProvider(key: .random())
        let other = FixedKeyProvider(key: .random())
        func encrypted(_ inner: any StorageClient, _ provider: FixedKeyProvider = key) -> any StorageClient {
            EncryptedStorageClient(wrapping: inner, keyProvider: provider)
        }
        switch self {
        case .memory:
            let inner = InMemoryStorageClient()
            return EncryptedFixture(store: encrypted(inner), sealed: inner, reopen: { encrypted(inner) },
                                    rekeyed: { encrypted(inner, other) }, crashing: { encrypted(CrashingWrites(inner: inner)) })
        case .file:
            let directory = scratchDirectory() + "/records"
            let inner = try FileStorageClient(directory: directory)
            return EncryptedFixture(
                store: encrypted(inner), sealed: inner,
                reopen: { encrypted(try FileStorageClient(directory: directory)) },
                rekeyed: { encrypted(try FileStorageClient(directory: directory), other) },
                crashing: {
                    encrypted(try FileStorageClient(directory: directory) { step throws(StorageError) in
                        if step == .beforeRename { throw .io(operation: "injected crash", errno: 5) }
                    })
                })
        case .sqlite:
            let path = scratchDirectory() + "/records.sqlite"
            let inner = try SQLiteStorageClient(path: path)
            return EncryptedFixture(
                store: encrypted(inner), sealed: inner,
                reopen: { encrypted(try SQLiteStorageClient(path: path)) },
                rekeyed: { encrypted(try SQLiteStorageClient(path: path), other) },
                crashing: { encrypted(CrashingWrites(inner: try SQLiteStorageClient(path: path))) })
        case .keychain:
            let items = InMemoryKeychainItemStore()
            return EncryptedFixture(
                store: KeychainStorageClient(items: items), sealed: KeychainRecordStore(items: items),
                reopen: { KeychainStorageClient(items: items) },
                rekeyed: {
                    let restored = items.copy()
                    restored.force(StorageKey.random().bytes, account: KeychainAccount.storageKey)
                    return KeychainStorageClient(items: restored)
                },
                crashing: { KeychainStorageClient(items: FailingSetItems(inner: items)) })
        case .keychainSealed:
            let items = InMemoryKeychainItemStore()
            let sealer = SoftwareStorageKeySealer()
            return EncryptedFixture(
                store: KeychainStorageClient(items: items, sealer: sealer), sealed: KeychainRecordStore(items: items),
                reopen: { KeychainStorageClient(items: items, sealer: sealer) },
                rekeyed: {
                    let restored = items.copy()
                    restored.force(try sealer.seal(StorageKey.random().bytes), account: KeychainAccount.sealedStorageKey)
                    return KeychainStorageClient(items: restored, sealer: sealer)
                },
                crashing: { KeychainStorageClient(items: FailingSetItems(inner: items), sealer: sealer) })
        }
    }
}

@Suite("Encrypted stores: EncryptedStorageClient over every built-in, KeychainStorageClient over its double")
struct EncryptedStorageClientTests {
    @Test("round trip; shares are ciphertext at rest, with a fresh nonce per write", arguments: EncryptedBackend.allCases)
    func roundTrip(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        #expect(try await f.store.read(keyId: keyA) == nil)
        let record = KeyshareRecord(keyId: keyA, staged: share(0x5A, kind: .eddsa), current: share(0x5B))
        try await f.store.write(record)
        #expect(try await f.store.read(keyId: keyA) == record)
        #expect(try await f.reopen().read(keyId: keyA) == record)

        let first = try #require(try await f.sealed.read(keyId: keyA))
        #expect(first.staged?.kind == .eddsa && first.current?.kind == .ecdsa)
        for sealed in [first.staged, first.current].compactMap({ $0 }) {
            let bytes = Array(sealed.bytes)
            #expect(bytes.count == 300 + SealedShareCodec.minimumByteCount)
            #expect(!bytes.indices.dropLast(7).contains { i in bytes[i..<(i + 8)].allSatisfy { $0 == 0x5A || $0 == 0x5B } })
        }
        try await f.store.write(record)
        let second = try #require(try await f.sealed.read(keyId: keyA))
        #expect(second.current != first.current && second.staged != first.staged)

        try await f.store.delete(keyId: keyA)
        #expect(try await f.store.read(keyId: keyA) == nil)
        #expect(try await f.sealed.read(keyId: keyA) == nil)
    }

    @Test("stage, promote and discard follow the StorageClient contract", arguments: EncryptedBackend.allCases)
    func stagePromoteDiscard(_ backend: EncryptedBackend) async throws {
        let store = try backend.fixture().store
        try await store.stage(keyId: keyA, share(1))
        #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, staged: share(1)))
        #expect(try await store.promote(keyId: keyA) == share(1))
        #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(1)))
        #expect(await storageError { try await store.promote(keyId: keyA) } == .nothingStaged(keyId: keyA))
        try await store.stage(keyId: keyA, share(2))
        try await store.discardStaged(keyId: keyA)
        #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(1)))
        try await store.stage(keyId: keyB, share(9))
        try await store.discardStaged(keyId: keyB)
        #expect(try await store.read(keyId: keyB) == nil)
        #expect(await storageError { try await store.write(KeyshareRecord(keyId: keyA)) } == .emptyRecord(keyId: keyA))
        for bad in ["", "../x", "ab/cd", "~ss/other/abcd"] {
            #expect(await storageError { _ = try await store.read(keyId: bad) } == .invalidKeyId)
            #expect(await storageError { try await store.write(KeyshareRecord(keyId: bad, current: share(1))) } == .invalidKeyId)
        }
    }

    @Test("a crash between stage and promote: the relaunched app sees both shares and can promote or discard",
          arguments: EncryptedBackend.allCases)
    func crashBetweenStageAndPromote(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        try await f.store.write(KeyshareRecord(keyId: keyA, current: share(1)))
        try await f.store.stage(keyId: keyA, share(2))
        let relaunched = try f.reopen()
        #expect(try await relaunched.read(keyId: keyA) == KeyshareRecord(keyId: keyA, staged: share(2), current: share(1)))
        #expect(try await relaunched.promote(keyId: keyA) == share(2))
        #expect(try await f.reopen().read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(2)))

        try await f.store.stage(keyId: keyA, share(3))
        let again = try f.reopen()
        try await again.discardStaged(keyId: keyA)
        #expect(try await f.reopen().read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(2)))
    }

    @Test("a crash in the middle of a write leaves the record as it was", arguments: EncryptedBackend.allCases)
    func crashDuringWrite(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        let old = KeyshareRecord(keyId: keyA, current: share(1))
        try await f.store.write(old)
        let crashing = try f.crashing()
        #expect(await storageError { try await crashing.stage(keyId: keyA, share(2)) } != nil)
        #expect(await storageError { try await crashing.promote(keyId: keyA) } == .nothingStaged(keyId: keyA))
        #expect(try await f.reopen().read(keyId: keyA) == old)
    }

    @Test("a record sealed under another key is wrongStorageKey, and nothing changes", arguments: EncryptedBackend.allCases)
    func wrongKey(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        let record = KeyshareRecord(keyId: keyA, staged: share(2), current: share(1))
        try await f.store.write(record)
        let before = try await f.sealed.read(keyId: keyA)
        let rekeyed = try f.rekeyed()
        #expect(await storageError { _ = try await rekeyed.read(keyId: keyA) } == .wrongStorageKey(keyId: keyA))
        #expect(await storageError { try await rekeyed.promote(keyId: keyA) } == .wrongStorageKey(keyId: keyA))
        #expect(await storageError { try await rekeyed.stage(keyId: keyA, share(3)) } == .wrongStorageKey(keyId: keyA))
        #expect(await storageError { try await rekeyed.discardStaged(keyId: keyA) } == .wrongStorageKey(keyId: keyA))
        #expect(try await f.sealed.read(keyId: keyA) == before)
        #expect(try await f.store.read(keyId: keyA) == record)
    }

    @Test("corrupted, truncated and other-version records are typed errors, and nothing changes",
          arguments: EncryptedBackend.allCases)
    func corruptedRecords(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        let record = KeyshareRecord(keyId: keyA, staged: share(2), current: share(1))
        try await f.store.write(record)
        let good = try #require(try await f.sealed.read(keyId: keyA))
        let goodBytes = Array(try #require(good.current).bytes)
        let versionAt = SealedShareCodec.magic.count
        let cases: [(String, (inout [UInt8]) -> Void, StorageError)] = [
            ("ciphertext bit", { $0[60] ^= 0x01 }, .recordNotAuthentic(keyId: keyA)),
            ("tag bit", { $0[$0.count - 1] ^= 0x80 }, .recordNotAuthentic(keyId: keyA)),
            ("nonce bit", { $0[SealedShareCodec.headerByteCount] ^= 0x01 }, .recordNotAuthentic(keyId: keyA)),
            ("key check bit", { $0[versionAt + 1] ^= 0x01 }, .wrongStorageKey(keyId: keyA)),
            ("old version", { $0[versionAt] = 0 }, .unsupportedRecordVersion(keyId: keyA, version: 0)),
            ("newer version", { $0[versionAt] = 2 }, .unsupportedRecordVersion(keyId: keyA, version: 2)),
            ("bad magic", { $0[0] ^= 0x20 }, .corruptRecord(keyId: keyA, reason: "not an encrypted record")),
            ("truncated to the header", { $0.removeLast($0.count - SealedShareCodec.headerByteCount) },
             .corruptRecord(keyId: keyA, reason: "truncated")),
            ("truncated to 3 bytes", { $0.removeLast($0.count - 3) }, .corruptRecord(keyId: keyA, reason: "not an encrypted record")),
            ("one byte short", { $0.removeLast() }, .recordNotAuthentic(keyId: keyA)),
            ("one byte more", { $0.append(0) }, .recordNotAuthentic(keyId: keyA)),
        ]
        for (name, damage, expected) in cases {
            var bytes = goodBytes
            damage(&bytes)
            let damaged = KeyshareRecord(keyId: keyA, staged: good.staged, current: StoredShare(kind: .ecdsa, bytes: bytes))
            try await f.sealed.write(damaged)
            #expect(await storageError { _ = try await f.store.read(keyId: keyA) } == expected, "\(name)")
            #expect(await storageError { try await f.store.promote(keyId: keyA) } == expected, "\(name)")
            #expect(try await f.sealed.read(keyId: keyA) == damaged, "\(name)")
        }
        // The kind is authenticated too.
        try await f.sealed.write(KeyshareRecord(keyId: keyA, staged: good.staged, current: StoredShare(kind: .eddsa, bytes: goodBytes)))
        #expect(await storageError { _ = try await f.store.read(keyId: keyA) } == .recordNotAuthentic(keyId: keyA))
        try await f.sealed.write(good)
        #expect(try await f.store.read(keyId: keyA) == record)
    }

    @Test("a sealed record is bound to its key id and its slots", arguments: EncryptedBackend.allCases)
    func boundToIdAndSlot(_ backend: EncryptedBackend) async throws {
        let f = try backend.fixture()
        try await f.store.write(KeyshareRecord(keyId: keyA, staged: share(2), current: share(1)))
        let sealed = try #require(try await f.sealed.read(keyId: keyA))

        // Moved to another key id (the wrapped store re-binds it, so only the encryption can notice).
        try await f.sealed.write(KeyshareRecord(keyId: keyB, staged: sealed.staged, current: sealed.current))
        #expect(await storageError { _ = try await f.store.read(keyId: keyB) } == .recordNotAuthentic(keyId: keyB))
        #expect(await storageError { try await f.store.promote(keyId: keyB) } == .recordNotAuthentic(keyId: keyB))

        // Moved to a reserved id.
        let presig = KeyId.presignaturePrefix + keyA
        try await f.sealed.write(KeyshareRecord(keyId: presig, current: sealed.current))
        #expect(await storageError { _ = try await f.store.read(keyId: presig) } == .recordNotAuthentic(keyId: presig))

        // Staged and current swapped, or one copied over the other.
        try await f.sealed.write(KeyshareRecord(keyId: keyA, staged: sealed.current, current: sealed.staged))
        #expect(await storageError { _ = try await f.store.read(keyId: keyA) } == .recordNotAuthentic(keyId: keyA))
        try await f.sealed.write(KeyshareRecord(keyId: keyA, staged: nil, current: sealed.staged))
        #expect(await storageError { _ = try await f.store.read(keyId: keyA) } == .recordNotAuthentic(keyId: keyA))
        #expect(await storageError { try await f.store.promote(keyId: keyA) } == .recordNotAuthentic(keyId: keyA))
        #expect(try await f.sealed.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: sealed.staged))
    }

    @Test("known answer: the sealed-share format (computed independently with Python's hmac and libsodium via ctypes)")
    func knownAnswer() throws {
        let key = try StorageKey(bytes: Array(0..<32))
        let share = StoredShare(kind: .ecdsa, bytes: Array("silentshard share".utf8))
        let sealed = try SealedShareCodec.seal(share, keyId: keyA, slot: .current, key: key, nonce: Array(0x40..<0x58))
        #expect(Hex.encode(sealed.bytes) == "5353454e01f7631141801958d3404142434445464748494a4b4c4d4e4f5051525354555657"
                + "a7506915be940a7eee86e39edcf404e0f71a8161cc4e9923e481f261b73568c228")
        #expect(sealed.kind == .ecdsa)
        #expect(try SealedShareCodec.open(sealed, keyId: keyA, slot: .current, key: key) == share)
        #expect(throws: StorageError.recordNotAuthentic(keyId: keyA)) {
            try SealedShareCodec.open(sealed, keyId: keyA, slot: .staged, key: key)
        }
    }

    @Test("uppercase key ids name the same record")
    func uppercaseIds() async throws {
        for backend in EncryptedBackend.allCases {
            let store = try backend.fixture().store
            try await store.write(KeyshareRecord(keyId: keyA.uppercased(), current: share(5)))
            #expect(try await store.read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(5)), "\(backend)")
        }
    }
}
