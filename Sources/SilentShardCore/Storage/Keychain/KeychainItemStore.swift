/// The few Keychain operations the SDK's Apple built-ins need: one data item per account, never
/// synchronized, readable on this device only (the Apple implementation is `SecurityKeychainItemStore`;
/// tests run the same code over an in-memory double).
///
/// Each call is atomic: an item holds the old bytes or the new ones, never a mix.
protocol KeychainItemStore: Sendable {
    /// The item's bytes, or nil when there is none.
    func data(account: String) throws(StorageError) -> [UInt8]?
    /// Adds the item only if none exists; returns false (and changes nothing) when one does.
    func add(_ data: [UInt8], account: String) throws(StorageError) -> Bool
    /// Creates or replaces the item.
    func set(_ data: [UInt8], account: String) throws(StorageError)
    /// Removes the item; a missing item is not an error.
    func delete(account: String) throws(StorageError)
}

/// When the Keychain lets the SDK read its items. Both choices are `…ThisDeviceOnly`: items are never
/// synchronized through iCloud nor restored onto another device from a backup.
public enum KeychainAccessibility: Sendable, CaseIterable {
    /// Readable after the device was unlocked once since boot (background sessions keep working).
    case afterFirstUnlockThisDeviceOnly
    /// Readable only while the device is unlocked.
    case whenUnlockedThisDeviceOnly
}

/// The Keychain accounts the SDK uses besides records (whose accounts are canonical key ids). Neither
/// is a valid key id, so no record can overwrite them.
enum KeychainAccount {
    /// The storage key of `KeychainStorageClient`.
    static let storageKey = "~ss/storage-key/v1"
    /// The storage key sealed by the Secure Enclave (`StorageKeySealer`).
    static let sealedStorageKey = "~ss/storage-key-sealed/v1"
    /// The Secure Enclave key-agreement key's blob that seals the storage key.
    static let storageKeySealingKey = "~ss/storage-key-sealing-key/v1"
    /// The Secure Enclave key blob of `SecureEnclaveMessageSigner` named `name`.
    static func deviceKey(_ name: String) -> String { "~ss/device-key/" + name }
}
