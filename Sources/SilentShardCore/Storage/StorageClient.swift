/// Where the app keeps its keyshare records (docs/design.md §6, session.md §7.1).
///
/// Implementations MUST write a record atomically (all of it or nothing, durable when `write`
/// returns), MUST accept the reserved key ids `~ss/presig/<hex>`, `~ss/ban/<hex>` and `~ss/backup/<hex>`, and SHOULD store
/// records encrypted or in protected storage (they hold secret shares): `EncryptedStorageClient` wraps
/// any store, `KeychainStorageClient` is the Apple default (docs/storage.md). The built-ins
/// (`InMemoryStorageClient`, `FileStorageClient`, `SQLiteStorageClient`, the encrypted ones) throw
/// `StorageError`; app-supplied implementations may throw their own errors.
///
/// The read-modify-write helpers below (`stage`, `promote`, `discardStaged`) are not atomic against
/// concurrent callers on the same key id: the SDK serializes share-changing operations per key id
/// (session.md §7.2 rule 6); each helper's single `write` is atomic against crashes.
public protocol StorageClient: Sendable {
    /// The record for `keyId`, or nil when none exists.
    func read(keyId: String) async throws -> KeyshareRecord?
    /// Replaces the record for `record.keyId` atomically and durably.
    func write(_ record: KeyshareRecord) async throws
    /// Removes the record for `keyId`; removing a missing record is not an error.
    func delete(keyId: String) async throws
}

extension StorageClient {
    /// Durably stages `share` for `keyId`, keeping the current share (session.md §7.2 rule 1:
    /// stage before vote). Replaces an earlier staged share.
    public func stage(keyId: String, _ share: StoredShare) async throws {
        var record = try await read(keyId: keyId) ?? KeyshareRecord(keyId: keyId)
        record.staged = share
        try await write(record)
    }

    /// Makes the staged share current and clears the staged slot, in one atomic write; returns the
    /// new current share. Throws `StorageError.nothingStaged` when there is nothing to promote.
    @discardableResult
    public func promote(keyId: String) async throws -> StoredShare {
        guard var record = try await read(keyId: keyId), let staged = record.staged else {
            throw StorageError.nothingStaged(keyId: keyId)
        }
        record.current = staged
        record.staged = nil
        try await write(record)
        return staged
    }

    /// Rolls back: drops the staged share and keeps the current one. A record left with no share
    /// (an aborted keygen, import or recover) is deleted. No record, or nothing staged: no change.
    public func discardStaged(keyId: String) async throws {
        guard var record = try await read(keyId: keyId), record.staged != nil else { return }
        record.staged = nil
        if record.current == nil {
            try await delete(keyId: keyId)
        } else {
            try await write(record)
        }
    }
}
