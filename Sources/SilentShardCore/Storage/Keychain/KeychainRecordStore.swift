/// Records as Keychain items: one item per canonical key id holding `KeyshareRecordCodec` bytes
/// (versioned, checksummed, bound to the key id). `KeychainStorageClient` puts it under encryption.
struct KeychainRecordStore: StorageClient {
    let items: any KeychainItemStore

    func read(keyId: String) async throws -> KeyshareRecord? {
        let id = try KeyId.canonical(keyId)
        guard let bytes = try items.data(account: id) else { return nil }
        return try KeyshareRecordCodec.decode(bytes, expectedKeyId: id)
    }

    func write(_ record: KeyshareRecord) async throws {
        var record = record
        record.keyId = try KeyId.canonical(record.keyId)
        try items.set(try KeyshareRecordCodec.encode(record), account: record.keyId)
    }

    func delete(keyId: String) async throws {
        try items.delete(account: KeyId.canonical(keyId))
    }
}
