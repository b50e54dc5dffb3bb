import Foundation
import MPCCrypto
import Testing
@testable import SilentShardCore

@Suite("KeychainStorageClient: its storage key, its items")
struct KeychainStorageClientTests {
    @Test("the storage key is created once, on first use, and shared by every client of the Keychain")
    func keyCreatedOnce() async throws {
        let items = InMemoryKeychainItemStore()
        let first = KeychainStorageClient(items: items)
        #expect(try await first.read(keyId: keyA) == nil)
        #expect(try items.data(account: KeychainAccount.storageKey) == nil)  // reading nothing needs no key
        try await first.write(KeyshareRecord(keyId: keyA, current: share(1)))
        let key = try #require(try items.data(account: KeychainAccount.storageKey))
        #expect(key.count == 32)
        #expect(try await KeychainStorageClient(items: items).read(keyId: keyA) == KeyshareRecord(keyId: keyA, current: share(1)))
        try await first.write(KeyshareRecord(keyId: keyB, current: share(2)))
        #expect(try items.data(account: KeychainAccount.storageKey) == key)
    }

    @Test("a client that loses the race to create the key uses the winner's key, never overwriting it")
    func keyCreationRace() async throws {
        let items = InMemoryKeychainItemStore()
        let winner = StorageKey.random()
        // The client found no key; another client adds its key just before this one's add.
        items.beforeAdd.withLock { $0 = { store in store.force(winner.bytes, account: KeychainAccount.storageKey) } }
        let record = KeyshareRecord(keyId: keyA, current: share(1))
        try await KeychainStorageClient(items: items).write(record)
        #expect(try items.data(account: KeychainAccount.storageKey) == winner.bytes)
        let underWinner = EncryptedStorageClient(wrapping: KeychainRecordStore(items: items), keyProvider: FixedKeyProvider(key: winner))
        #expect(try await underWinner.read(keyId: keyA) == record)
    }

    @Test("a stored key of the wrong length is invalidStorageKey and is never replaced")
    func badStoredKey() async throws {
        let items = InMemoryKeychainItemStore()
        items.force([UInt8](repeating: 7, count: 31), account: KeychainAccount.storageKey)
        let store = KeychainStorageClient(items: items)
        #expect(await storageError { try await store.write(KeyshareRecord(keyId: keyA, current: share(1))) } == .invalidStorageKey)
        #expect(try items.data(account: KeychainAccount.storageKey) == [UInt8](repeating: 7, count: 31))
        #expect(try items.data(account: keyA) == nil)
    }

    @Test("a damaged item is corruptRecord; an item under another account is keyIdMismatch")
    func damagedItems() async throws {
        let items = InMemoryKeychainItemStore()
        let store = KeychainStorageClient(items: items)
        try await store.write(KeyshareRecord(keyId: keyA, current: share(1)))
        var bytes = try #require(try items.data(account: keyA))
        items.force(bytes, account: keyB)
        #expect(await storageError { _ = try await store.read(keyId: keyB) } == .keyIdMismatch(keyId: keyB))
        bytes[bytes.count / 2] ^= 1
        items.force(bytes, account: keyA)
        #expect(await storageError { _ = try await store.read(keyId: keyA) }
                == .corruptRecord(keyId: keyA, reason: "checksum mismatch"))
        items.force([], account: keyA)
        #expect(await storageError { _ = try await store.read(keyId: keyA) } == .corruptRecord(keyId: keyA, reason: "truncated"))
    }

    @Test("a sealed storage key: only the sealed form is stored, another enclave cannot open it, kinds never mix")
    func sealedKey() async throws {
        let items = InMemoryKeychainItemStore()
        let sealer = SoftwareStorageKeySealer()
        let record = KeyshareRecord(keyId: keyA, current: share(1))
        try await KeychainStorageClient(items: items, sealer: sealer).write(record)
        #expect(try items.data(account: KeychainAccount.storageKey) == nil)
        let stored = try #require(try items.data(account: KeychainAccount.sealedStorageKey))
        let key = try StorageKey(bytes: try sealer.open(stored))
        #expect(!stored.indices.dropLast(7).contains { stored[$0..<($0 + 8)] == key.bytes[0..<8] })
        let underKey = EncryptedStorageClient(wrapping: KeychainRecordStore(items: items), keyProvider: FixedKeyProvider(key: key))
        #expect(try await underKey.read(keyId: keyA) == record)
        #expect(try await KeychainStorageClient(items: items, sealer: sealer).read(keyId: keyA) == record)

        // Another device's enclave (or a copied Keychain) cannot open the key, and replaces nothing.
        let elsewhere = KeychainStorageClient(items: items, sealer: SoftwareStorageKeySealer())
        #expect(await storageError { _ = try await elsewhere.read(keyId: keyA) }
                == .keychain(operation: "open the sealed storage key", status: -26275))
        #expect(await storageError { try await elsewhere.stage(keyId: keyA, share(2)) }
                == .keychain(operation: "open the sealed storage key", status: -26275))
        #expect(try items.data(account: KeychainAccount.sealedStorageKey) == stored)

        // A client without the sealer does not make a second, plain key for the same records.
        let unsealed = KeychainStorageClient(items: items)
        #expect(await storageError { try await unsealed.write(KeyshareRecord(keyId: keyB, current: share(3))) }
                == .keychain(operation: "storage key is sealed by the Secure Enclave", status: -25299))
        #expect(try items.data(account: KeychainAccount.storageKey) == nil && items.data(account: keyB) == nil)
        // Nor the reverse.
        let plainItems = InMemoryKeychainItemStore()
        try await KeychainStorageClient(items: plainItems).write(record)
        #expect(await storageError { _ = try await KeychainStorageClient(items: plainItems, sealer: sealer).read(keyId: keyA) }
                == .keychain(operation: "storage key is not sealed", status: -25299))
        #expect(try plainItems.data(account: KeychainAccount.sealedStorageKey) == nil)
    }

    @Test("key and error descriptions never show key bytes")
    func redaction() async throws {
        let key = try StorageKey(bytes: [UInt8](repeating: 0xC3, count: 32))
        var dumped = ""
        dump(key, to: &dumped)
        for text in [key.description, String(reflecting: key), "\(key)", dumped] {
            #expect(!text.lowercased().contains("c3c3") && !text.contains("195"), "\(text)")
        }
        #expect(throws: StorageError.invalidStorageKey) { try StorageKey(bytes: [UInt8](repeating: 1, count: 16)) }
        let errors: [StorageError] = [.invalidStorageKey, .wrongStorageKey(keyId: keyA), .recordNotAuthentic(keyId: keyA),
                                      .unsupportedRecordVersion(keyId: keyA, version: 9), .keychain(operation: "SecItemAdd", status: -25299)]
        for error in errors { #expect(!error.description.lowercased().contains("c3c3")) }
    }
}
