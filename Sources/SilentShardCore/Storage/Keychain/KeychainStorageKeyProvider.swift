import MPCCrypto

/// The storage key of `KeychainStorageClient`, kept as a Keychain item of its own: loaded on first
/// use, created (random) if absent, then cached for the life of the provider.
///
/// Creation never overwrites: a new key is `add`ed only if no item exists, and when another client won
/// that race the stored key is read back, so two clients never seal under different keys. A stored
/// key of the wrong length is `invalidStorageKey` (it is never replaced: that would orphan records).
final class KeychainStorageKeyProvider: StorageKeyProvider {
    private let items: any KeychainItemStore
    private let cached = LockedValue<StorageKey?>(nil)

    init(items: any KeychainItemStore) { self.items = items }

    func storageKey() async throws -> StorageKey {
        if let key = cached.withLock({ $0 }) { return key }
        let key = try loadOrCreate()
        cached.withLock { $0 = key }
        return key
    }

    private func loadOrCreate() throws(StorageError) -> StorageKey {
        if let bytes = try items.data(account: KeychainAccount.storageKey) { return try StorageKey(bytes: bytes) }
        let fresh = StorageKey.random()
        if try items.add(fresh.bytes, account: KeychainAccount.storageKey) { return fresh }
        guard let bytes = try items.data(account: KeychainAccount.storageKey) else {
            throw .keychain(operation: "read storage key after a concurrent add", status: -25300)  // errSecItemNotFound
        }
        return try StorageKey(bytes: bytes)
    }
}
