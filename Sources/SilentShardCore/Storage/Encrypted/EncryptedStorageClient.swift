/// A `StorageClient` that encrypts every share before handing the record to another `StorageClient`.
///
/// Each share (staged and current) is sealed with XChaCha20-Poly1305 under the 32-byte key from
/// `keyProvider`, with a fresh random 24-byte nonce per write. The associated data binds the record's
/// key id, the slot (staged or current), the share's kind, the format version and the key's check
/// value, so a sealed share copied to another key id, or swapped between the staged and current slots,
/// fails to open (`StorageError.recordNotAuthentic`); a share sealed under another key is
/// `wrongStorageKey`; damaged bytes are `corruptRecord` or `recordNotAuthentic`; an unknown format
/// version is `unsupportedRecordVersion`. A failed read changes nothing (`stage`/`promote` read first).
///
/// The wrapped store keeps the record's shape (`keyId`, which slots are present, each share's kind),
/// never a share's bytes in the clear. Writes stay as atomic as the wrapped store's: one record, one
/// `write`. Delete passes through.
public struct EncryptedStorageClient: StorageClient {
    private let inner: any StorageClient
    private let keyProvider: any StorageKeyProvider

    /// Encrypts records written to `inner` under the key from `keyProvider`.
    public init(wrapping inner: any StorageClient, keyProvider: any StorageKeyProvider) {
        self.inner = inner
        self.keyProvider = keyProvider
    }

    /// The record for `keyId` with its shares opened, or nil; a share that does not open is a typed
    /// `StorageError` (see the type's documentation).
    public func read(keyId: String) async throws -> KeyshareRecord? {
        let id = try KeyId.canonical(keyId)
        guard let stored = try await inner.read(keyId: id) else { return nil }
        let key = try await keyProvider.storageKey()
        return KeyshareRecord(
            keyId: id,
            staged: try stored.staged.map { share throws(StorageError) in
                try SealedShareCodec.open(share, keyId: id, slot: .staged, key: key)
            },
            current: try stored.current.map { share throws(StorageError) in
                try SealedShareCodec.open(share, keyId: id, slot: .current, key: key)
            })
    }

    /// Seals each share (fresh nonce) and writes the record to the wrapped store in one `write`.
    public func write(_ record: KeyshareRecord) async throws {
        let id = try KeyId.canonical(record.keyId)
        guard record.staged != nil || record.current != nil else { throw StorageError.emptyRecord(keyId: id) }
        let key = try await keyProvider.storageKey()
        let sealed = KeyshareRecord(
            keyId: id,
            staged: try record.staged.map { share throws(StorageError) in
                try SealedShareCodec.seal(share, keyId: id, slot: .staged, key: key)
            },
            current: try record.current.map { share throws(StorageError) in
                try SealedShareCodec.seal(share, keyId: id, slot: .current, key: key)
            })
        try await inner.write(sealed)
    }

    /// Deletes the record from the wrapped store.
    public func delete(keyId: String) async throws {
        try await inner.delete(keyId: KeyId.canonical(keyId))
    }
}

extension FileStorageClient {
    /// A file store whose shares are encrypted (`EncryptedStorageClient` over `FileStorageClient`), for
    /// apps off Apple platforms or that keep records in files; on Apple prefer `KeychainStorageClient`.
    public static func encrypted(directory: String, keyProvider: any StorageKeyProvider) throws(StorageError) -> EncryptedStorageClient {
        EncryptedStorageClient(wrapping: try FileStorageClient(directory: directory), keyProvider: keyProvider)
    }
}

extension SQLiteStorageClient {
    /// A SQLite store whose shares are encrypted (`EncryptedStorageClient` over `SQLiteStorageClient`).
    public static func encrypted(path: String, keyProvider: any StorageKeyProvider) throws(StorageError) -> EncryptedStorageClient {
        EncryptedStorageClient(wrapping: try SQLiteStorageClient(path: path), keyProvider: keyProvider)
    }
}
