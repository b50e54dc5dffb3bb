import Foundation
import MPCCrypto

/// The app's presignature records, kept through its `StorageClient` (`docs/protocol/session.md` §8.2, §8.5;
/// `docs/presignature-lifecycle.md`):
///
/// * each presignature: `"~ss/presig/" + hex(presig_id)` holding a `PresignatureRecord`;
/// * each key's index of them (a `StorageClient` cannot list): `"~ss/presig/" + hex(SHA-256("SilentShard/presignature-index/v1" ‖ 0x00 ‖ key id))`,
///   an id no presignature can have, holding `"SSPI" ‖ u8 1 ‖ u16 n ‖ n × presig_id`.
///
/// A new presignature is added to the index before its record is written, and removed from the index after
/// its record is deleted, so a crash leaves at most an index entry without a record (dropped when seen) and
/// never a record the index does not know (secrets nobody would ever delete). Index updates of one key, and
/// the finish of one presignature, are serialized in this process (`PresignatureShelf.locks`); two
/// processes sharing one storage are not supported (a `StorageClient` has no compare-and-swap).
package struct PresignatureShelf: Sendable {
    let storage: any StorageClient

    package init(storage: any StorageClient) { self.storage = storage }

    /// Process-wide: one index writer per key, one finisher per presignature.
    package static let locks = KeyedAsyncLocks()

    static let indexMagic = Array("SSPI".utf8)
    static let indexLabel = Array("SilentShard/presignature-index/v1".utf8) + [0]
    /// Most presignatures one key's index holds (the nodes' quotas are 100 each by default).
    package static let maximumPerKey = 1_000

    package static func recordKeyId(_ id: [UInt8]) -> String { KeyId.presignaturePrefix + Hex.encode(id) }

    package static func indexKeyId(keyId: [UInt8]) -> String {
        KeyId.presignaturePrefix + Hex.encode(SHA256.hash(indexLabel + keyId))
    }

    // MARK: - Records

    /// Stores a new record: index entry first, then the record.
    package func add(_ record: PresignatureRecord) async throws(SilentShardError) {
        let keyId = record.header.keyId, id = record.header.id
        try await Self.locks.locked("index/" + Hex.encode(keyId)) { () throws(SilentShardError) in
            var ids = try await index(keyId: keyId)
            guard ids.count < Self.maximumPerKey else {
                throw SilentShardError.invalidInput(reason: "too many stored presignatures for this key")
            }
            if !ids.contains(id) { ids.append(id) }
            try await writeIndex(ids, keyId: keyId)
        }
        try await write(record)
    }

    /// The record of presignature `id`, or nil. A record that fails strict decoding is `storage`.
    package func record(id: [UInt8]) async throws(SilentShardError) -> PresignatureRecord? {
        let storageKeyId = Self.recordKeyId(id)
        let stored: KeyshareRecord?
        do { stored = try await storage.read(keyId: storageKeyId) } catch { throw SilentShardError(storage: error) }
        guard let share = stored?.current else { return nil }
        do { return try PresignatureRecord(bytes: [UInt8](share.bytes), storageKeyId: storageKeyId) } catch {
            throw SilentShardError(storage: error)
        }
    }

    /// Replaces a record (one atomic, durable write).
    package func write(_ record: PresignatureRecord) async throws(SilentShardError) {
        do {
            try await storage.write(KeyshareRecord(keyId: Self.recordKeyId(record.header.id),
                                                   current: StoredShare(kind: .sdkRecord, bytes: record.encoded())))
        } catch {
            throw SilentShardError(storage: error)
        }
    }

    /// Deletes a record, then its index entry.
    package func remove(id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) {
        do { try await storage.delete(keyId: Self.recordKeyId(id)) } catch { throw SilentShardError(storage: error) }
        try await Self.locks.locked("index/" + Hex.encode(keyId)) { () throws(SilentShardError) in
            let ids = try await index(keyId: keyId)
            guard ids.contains(id) else { return }
            try await writeIndex(ids.filter { $0 != id }, keyId: keyId)
        }
    }

    /// Every record of `keyId` the index names. Index entries without a record, or whose record is
    /// unreadable, belongs to another key or is a leftover of an unfinished write, are dropped (with the
    /// record); nothing usable is lost by that, because such a record could not be opened or trusted.
    package func records(keyId: [UInt8]) async throws(SilentShardError) -> [PresignatureRecord] {
        try await Self.locks.locked("index/" + Hex.encode(keyId)) { () throws(SilentShardError) -> [PresignatureRecord] in
            let ids = try await index(keyId: keyId)
            var kept: [[UInt8]] = [], records: [PresignatureRecord] = []
            for id in ids {
                let record: PresignatureRecord?
                do { record = try await self.record(id: id) } catch { record = nil }
                guard let record, record.header.keyId == keyId else {
                    do { try await storage.delete(keyId: Self.recordKeyId(id)) } catch { throw SilentShardError(storage: error) }
                    continue
                }
                kept.append(id)
                records.append(record)
            }
            if kept.count != ids.count { try await writeIndex(kept, keyId: keyId) }
            return records
        }
    }

    // MARK: - Index

    private func index(keyId: [UInt8]) async throws(SilentShardError) -> [[UInt8]] {
        let stored: KeyshareRecord?
        do { stored = try await storage.read(keyId: Self.indexKeyId(keyId: keyId)) } catch { throw SilentShardError(storage: error) }
        guard let bytes = stored?.current.map({ [UInt8]($0.bytes) }) else { return [] }
        // Strict: "SSPI" ‖ 1 ‖ u16 n ‖ n ids. A damaged index is not trusted: it starts again empty (its
        // records, unreachable, hold presignatures this app can no longer find; the nodes' halves expire).
        guard bytes.count >= 7, Array(bytes[0..<4]) == Self.indexMagic, bytes[4] == 1 else { return [] }
        let count = Int(bytes[5]) << 8 | Int(bytes[6])
        guard bytes.count == 7 + 32 * count else { return [] }
        return (0..<count).map { Array(bytes[(7 + 32 * $0)..<(7 + 32 * ($0 + 1))]) }
    }

    private func writeIndex(_ ids: [[UInt8]], keyId: [UInt8]) async throws(SilentShardError) {
        let storageKeyId = Self.indexKeyId(keyId: keyId)
        do {
            guard !ids.isEmpty else { return try await storage.delete(keyId: storageKeyId) }
            let bytes = Self.indexMagic + [1, UInt8(ids.count >> 8), UInt8(ids.count & 0xFF)] + ids.flatMap { $0 }
            try await storage.write(KeyshareRecord(keyId: storageKeyId, current: StoredShare(kind: .sdkRecord, bytes: bytes)))
        } catch {
            throw SilentShardError(storage: error)
        }
    }
}

/// FIFO async locks by name, for short critical sections across `await`s (storage writes, one POST).
package actor KeyedAsyncLocks {
    private var waiting: [String: [CheckedContinuation<Void, Never>]] = [:]

    package init() {}

    func acquire(_ name: String) async {
        guard waiting[name] != nil else {
            waiting[name] = []
            return
        }
        await withCheckedContinuation { waiting[name, default: []].append($0) }
    }

    func release(_ name: String) {
        guard var queue = waiting[name] else { return }
        if queue.isEmpty {
            waiting[name] = nil
        } else {
            let next = queue.removeFirst()
            waiting[name] = queue
            next.resume()
        }
    }

    /// Runs `body` holding the lock `name`.
    package nonisolated func locked<Value>(_ name: String,
                                          _ body: () async throws(SilentShardError) -> Value) async throws(SilentShardError) -> Value {
        await acquire(name)
        do {
            let value = try await body()
            await release(name)
            return value
        } catch {
            await release(name)
            throw error
        }
    }
}
