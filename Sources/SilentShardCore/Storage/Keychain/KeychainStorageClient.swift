/// The secure default store for an Apple app: each record is a Keychain item (this device only, never
/// synchronized) whose shares are sealed by `EncryptedStorageClient` under a random 32-byte key that is
/// itself a Keychain item of the same service. Neither the records nor the key leave the device in a
/// backup that could be restored elsewhere.
///
/// Create it with `init(service:accessGroup:accessibility:sealKeyInSecureEnclave:)` (Apple platforms);
/// with `sealKeyInSecureEnclave` the Keychain holds the storage key only sealed by a Secure Enclave key. Deleting the key item
/// (for example with `SecItemDelete` on the whole service) makes every record unreadable
/// (`StorageError.wrongStorageKey`): keep a backup (`backup(keyshare:password:…)`) for recovery.
public struct KeychainStorageClient: StorageClient {
    private let encrypted: EncryptedStorageClient

    /// Records and key in `items` (the Apple Keychain, or a test double); the key sealed by `sealer` if
    /// one is given.
    init(items: any KeychainItemStore, sealer: (any StorageKeySealer)? = nil) {
        encrypted = EncryptedStorageClient(wrapping: KeychainRecordStore(items: items),
                                           keyProvider: KeychainStorageKeyProvider(items: items, sealer: sealer))
    }

    /// The record for `keyId`, decrypted, or nil.
    public func read(keyId: String) async throws -> KeyshareRecord? { try await encrypted.read(keyId: keyId) }

    /// Encrypts the record and replaces its Keychain item atomically.
    public func write(_ record: KeyshareRecord) async throws { try await encrypted.write(record) }

    /// Removes the record's Keychain item (the storage key stays).
    public func delete(keyId: String) async throws { try await encrypted.delete(keyId: keyId) }
}
