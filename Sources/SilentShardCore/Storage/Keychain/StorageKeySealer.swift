/// Seals `KeychainStorageClient`'s storage key so that only this device's Secure Enclave can open it
/// (Apple: `SecureEnclaveStorageKeySealer`, ECDH with a Secure Enclave P-256 key; tests: a double).
/// With a sealer the Keychain holds only the sealed key, so reading the Keychain alone (a jailbroken
/// device, a forensic image) does not open the records.
protocol StorageKeySealer: Sendable {
    /// The sealed form of a 32-byte key.
    func seal(_ key: [UInt8]) throws(StorageError) -> [UInt8]
    /// The key, from its sealed form; a blob that does not open is a typed error.
    func open(_ sealed: [UInt8]) throws(StorageError) -> [UInt8]
}
