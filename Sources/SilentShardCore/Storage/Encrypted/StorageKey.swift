import MPCCrypto

/// A 32-byte key that `EncryptedStorageClient` seals records under (XChaCha20-Poly1305).
///
/// Its `description`, `debugDescription` and reflection never show the key: only a short public
/// check value (a keyed hash, not the key) that tells two keys apart in diagnostics.
public struct StorageKey: Sendable, SecretRedacting {
    /// The key bytes; module-internal so that only the sealing code reads them.
    let bytes: [UInt8]
    /// `HMAC-SHA-256(key, "SilentShard/storage-key-check/v1")[0..<8]`: stored in each sealed record so a
    /// record sealed under another key is reported as `wrongStorageKey`, not as tampering.
    let check: [UInt8]

    /// The key's length in bytes.
    public static let byteCount = 32

    /// A key from 32 bytes the app keeps (for example in its own secure storage); any other length is
    /// `StorageError.invalidStorageKey`.
    public init(bytes: [UInt8]) throws(StorageError) {
        guard bytes.count == Self.byteCount else { throw .invalidStorageKey }
        self.init(unchecked: bytes)
    }

    /// A fresh key from the system's CSPRNG.
    public static func random() -> StorageKey {
        StorageKey(unchecked: SecureRandom.bytes(count: byteCount))
    }

    /// `bytes` must be 32 bytes long.
    private init(unchecked bytes: [UInt8]) {
        self.bytes = bytes
        check = Array(SHA256.hmac(key: bytes, data: Array("SilentShard/storage-key-check/v1".utf8)).prefix(8))
    }

    /// Shows the public check value only.
    public var description: String { "StorageKey(check: \(Hex.encode(check)))" }
}

/// Supplies the key an `EncryptedStorageClient` seals and opens records with.
///
/// Called before every read and write (cache the key if fetching it is slow). It must return the same
/// key for the life of the records: a different key makes every existing record `wrongStorageKey`.
/// Errors it throws reach the SDK's caller as storage failures; they must not contain key bytes.
public protocol StorageKeyProvider: Sendable {
    /// The current storage key.
    func storageKey() async throws -> StorageKey
}
