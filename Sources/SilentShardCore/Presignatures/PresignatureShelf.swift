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
/// never a record the index does not know (secrets nobody would ever delete). Index updates of one key (with
/// the record written or deleted), and everything that changes one presignature's record (its finish, its
/// removal), are serialized in this process (`PresignatureShelf.locks`; always presignature lock before
/// index lock); two
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

    /// What storage holds under a presignature's id.
    package enum Stored: Sendable {
        case missing
        /// Bytes that fail strict decoding, or a record of another key: never trusted, deleted when met.
        case corrupt
        case record(PresignatureRecord)
    }

    /// Stores a new record: its index entry, then the record, both under the key's index lock (so a listing
    /// never sees the entry without the record it is about to get).
    package func add(_ record: PresignatureRecord) async throws(SilentShardError) {
        let keyId = record.header.keyId, id = record.header.id
        try await Self.locks.locked(Self.indexLock(keyId)) { () throws(SilentShardError) in
            var ids = try await index(keyId: keyId)
            guard ids.count < Self.maximumPerKey else {
                throw SilentShardError.invalidInput(reason: "too many stored presignatures for this key")
            }
            if !ids.contains(id) { ids.append(id) }
            try await writeIndex(ids, keyId: keyId)
            try await write(record)
        }
    }

    /// What storage holds for presignature `id` of key `keyId`. A failing read is `storage` (nothing is
    /// concluded from it).
    package func stored(id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) -> Stored {
        let storageKeyId = Self.recordKeyId(id)
        let stored: KeyshareRecord?
        do { stored = try await storage.read(keyId: storageKeyId) } catch { throw SilentShardError(storage: error) }
        guard let share = stored?.current else { return .missing }
        guard share.kind == .sdkRecord, let record = try? PresignatureRecord(bytes: [UInt8](share.bytes), storageKeyId: storageKeyId),
              record.header.keyId == keyId
        else { return .corrupt }
        return .record(record)
    }

    /// The record of presignature `id` of key `keyId`, or nil when there is none; a corrupt one is `storage`.
    package func record(id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) -> PresignatureRecord? {
        switch try await stored(id: id, keyId: keyId) {
        case .missing: return nil
        case .corrupt: throw .storage(reason: "presignature record fails its integrity check")
        case .record(let record): return record
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

    /// Deletes the record of `id` and then its index entry, under the key's index lock.
    package func remove(id: [UInt8], keyId: [UInt8]) async throws(SilentShardError) {
        try await Self.locks.locked(Self.indexLock(keyId)) { () throws(SilentShardError) in
            do { try await storage.delete(keyId: Self.recordKeyId(id)) } catch { throw SilentShardError(storage: error) }
            let ids = try await index(keyId: keyId)
            guard ids.contains(id) else { return }
            try await writeIndex(ids.filter { $0 != id }, keyId: keyId)
        }
    }

    /// Under the presignature's lock (the one a finish holds), reads its record again and removes it if
    /// `shouldRemove` says so of what is stored now — never on a stale snapshot.
    package func remove(id: [UInt8], keyId: [UInt8],
                        if shouldRemove: @Sendable (Stored) -> Bool) async throws(SilentShardError) {
        try await Self.locks.locked(Self.presignatureLock(id)) { () throws(SilentShardError) in
            let now = try await stored(id: id, keyId: keyId)
            if shouldRemove(now) { try await remove(id: id, keyId: keyId) }
        }
    }

    /// Every readable record of `keyId` its index names. Entries without a record (a crash between the two
    /// writes of `add` in an older run) are dropped from the index; corrupt records are deleted. A storage
    /// read error is thrown and changes nothing.
    package func records(keyId: [UInt8]) async throws(SilentShardError) -> [PresignatureRecord] {
        try await Self.locks.locked(Self.indexLock(keyId)) { () throws(SilentShardError) -> [PresignatureRecord] in
            let ids = try await index(keyId: keyId)
            var kept: [[UInt8]] = [], records: [PresignatureRecord] = []
            for id in ids {
                switch try await stored(id: id, keyId: keyId) {
                case .missing: continue
                case .corrupt:
                    do { try await storage.delete(keyId: Self.recordKeyId(id)) } catch { throw SilentShardError(storage: error) }
                case .record(let record):
                    kept.append(id)
                    records.append(record)
                }
            }
            if kept.count != ids.count { try await writeIndex(kept, keyId: keyId) }
            return records
        }
    }

    static func indexLock(_ keyId: [UInt8]) -> String { "index/" + Hex.encode(keyId) }
    package static func presignatureLock(_ id: [UInt8]) -> String { "presig/" + Hex.encode(id) }

    // MARK: - Index

    private func index(keyId: [UInt8]) async throws(SilentShardError) -> [[UInt8]] {
        let storageKeyId = Self.indexKeyId(keyId: keyId)
        let stored: KeyshareRecord?
        do { stored = try await storage.read(keyId: storageKeyId) } catch { throw SilentShardError(storage: error) }
        guard let bytes = stored?.current.map({ [UInt8]($0.bytes) }) else { return [] }
        // Strict: "SSPI" ‖ 1 ‖ u16 n ‖ n ids. A damaged index is an error, not an empty list: rewriting it
        // would leave its records (with their secrets) where nothing finds them again.
        guard bytes.count >= 7, Array(bytes[0..<4]) == Self.indexMagic, bytes[4] == 1,
              bytes.count == 7 + 32 * (Int(bytes[5]) << 8 | Int(bytes[6]))
        else { throw SilentShardError(storage: StorageError.corruptRecord(keyId: storageKeyId, reason: "presignature index")) }
        let count = Int(bytes[5]) << 8 | Int(bytes[6])
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
