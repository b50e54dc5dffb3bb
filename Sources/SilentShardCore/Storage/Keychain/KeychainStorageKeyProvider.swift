import MPCCrypto

/// The storage key of `KeychainStorageClient`, kept as a Keychain item of its own: loaded on first
/// use, created (random) if absent, then cached for the life of the provider. With a `sealer` the item
/// holds the sealed key, under its own account (a plain and a sealed key are never confused).
///
/// Creation never overwrites: a new key is `add`ed only if no item exists, and when another client won
/// that race the stored key is read back, so two clients never seal under different keys. A stored
/// key of the wrong length is `invalidStorageKey` (it is never replaced: that would orphan records).
/// Nor is a key created while the other kind exists (a sealed key for a client without a sealer, or
/// the reverse): that is a `keychain` error, so one service never holds records under two keys.
final class KeychainStorageKeyProvider: StorageKeyProvider {
    private let items: any KeychainItemStore
    private let sealer: (any StorageKeySealer)?
    private let account: String
    private let otherAccount: String
    private let cached = LockedValue<StorageKey?>(nil)

    init(items: any KeychainItemStore, sealer: (any StorageKeySealer)? = nil) {
        self.items = items
        self.sealer = sealer
        account = sealer == nil ? KeychainAccount.storageKey : KeychainAccount.sealedStorageKey
        otherAccount = sealer == nil ? KeychainAccount.sealedStorageKey : KeychainAccount.storageKey
    }

    func storageKey() async throws -> StorageKey {
        if let key = cached.withLock({ $0 }) { return key }
        let key = try loadOrCreate()
        cached.withLock { $0 = key }
        return key
    }

    private func loadOrCreate() throws(StorageError) -> StorageKey {
        if let stored = try items.data(account: account) { return try key(from: stored) }
        guard try items.data(account: otherAccount) == nil else {
            throw .keychain(operation: sealer == nil ? "storage key is sealed by the Secure Enclave" : "storage key is not sealed",
                            status: -25299)  // errSecDuplicateItem
        }
        let fresh = StorageKey.random()
        if try items.add(try sealer?.seal(fresh.bytes) ?? fresh.bytes, account: account) { return fresh }
        guard let stored = try items.data(account: account) else {
            throw .keychain(operation: "read storage key after a concurrent add", status: -25300)  // errSecItemNotFound
        }
        return try key(from: stored)
    }

    private func key(from stored: [UInt8]) throws(StorageError) -> StorageKey {
        try StorageKey(bytes: try sealer?.open(stored) ?? stored)
    }
}
