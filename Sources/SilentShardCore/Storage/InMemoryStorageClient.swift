import MPCCrypto

/// Records kept in process memory: for tests and ephemeral sessions. Nothing survives the process,
/// so a real wallet needs a durable store (a lost staged share cannot be reconciled).
public final class InMemoryStorageClient: StorageClient {
    private let records = LockedValue<[String: KeyshareRecord]>([:])

    /// An empty store.
    public init() {}

    public func read(keyId: String) async throws -> KeyshareRecord? {
        let id = try KeyId.canonical(keyId)
        return records.withLock { $0[id] }
    }

    public func write(_ record: KeyshareRecord) async throws {
        var record = record
        record.keyId = try KeyId.canonical(record.keyId)
        guard record.staged != nil || record.current != nil else { throw StorageError.emptyRecord(keyId: record.keyId) }
        let stored = record
        records.withLock { $0[stored.keyId] = stored }
    }

    public func delete(keyId: String) async throws {
        let id = try KeyId.canonical(keyId)
        _ = records.withLock { $0.removeValue(forKey: id) }
    }

    /// Every stored key id (canonical form), sorted.
    public func keyIds() -> [String] { records.withLock { $0.keys.sorted() } }
}
