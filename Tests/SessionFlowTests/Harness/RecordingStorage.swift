import Foundation
import MPCCrypto
import SilentShardCore
import SilentShardTestSupport

/// A storage client that records every write (to check staged → current).
final class RecordingStorage: StorageClient {
    let inner = InMemoryStorageClient()
    private let log = LockedValue<[KeyshareRecord]>([])
    /// Makes every write fail (a full disk).
    let failWrites = LockedValue(false)
    /// Makes this many of the next promote writes (staged → current: a record with a current share and
    /// nothing staged) fail.
    let failPromotes = LockedValue(0)
    var writes: [KeyshareRecord] { log.withLock { $0 } }
    func read(keyId: String) async throws -> KeyshareRecord? { try await inner.read(keyId: keyId) }
    func write(_ record: KeyshareRecord) async throws {
        if failWrites.withLock({ $0 }) { throw StorageError.io(operation: "write", errno: 28) }
        if record.staged == nil, record.current != nil,
           failPromotes.withLock({ count in defer { count = max(0, count - 1) }; return count > 0 }) {
            throw StorageError.io(operation: "write", errno: 5)
        }
        log.withLock { $0.append(record) }
        try await inner.write(record)
    }
    func delete(keyId: String) async throws { try await inner.delete(keyId: keyId) }
}

