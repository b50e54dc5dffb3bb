import Foundation
import MPCCrypto

/// Presignatures across app restarts (`docs/presignature-lifecycle.md`): every presignature is kept
/// sealed in the session's `StorageClient` from the moment it is handed out until it is finished and its
/// record has aged out.
extension AppSession {
    /// How long after a presignature's expiry the app keeps its tombstone (session.md §8.2).
    static let tombstoneRetentionMilliseconds: UInt64 = 24 * 3600 * 1000

    /// Whether a record can never be used again: of another generation, unused within the app's 60 s margin
    /// of its expiry, or a tombstone 24 h past it.
    static func isDead(_ record: PresignatureRecord, now: UInt64, generation: [UInt8]) -> Bool {
        guard record.header.generation == generation else { return true }
        let expires = record.header.expiresAtMilliseconds
        switch record.state {
        case .ready: return now + SessionConstants.presignatureAppMarginSeconds * 1000 >= expires
        case .finishing, .finished: return now >= expires &+ tombstoneRetentionMilliseconds
        }
    }

    /// The usable presignatures of `keyshare`'s key (see `TrioSession.preSignatures(keyshare:)`).
    package func storedPreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try check(keyshare)
        let stored: KeyshareRecord?
        do { stored = try await storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        guard let current = stored?.current else { throw .keyNotFound(keyId: keyshare.keyId) }
        guard try AppStoredShare.decode(current, mode: mode).keyshare.generation == keyshare.generation else {
            throw .staleKeyshare
        }
        let shelf = presignatures, keyId = keyshare.keyIdBytes
        let now = clock.milliseconds
        var usable: [PreSignature] = []
        for record in try await shelf.records(keyId: keyId) {
            if Self.isDead(record, now: now, generation: [UInt8](keyshare.generation)) {
                try await shelf.remove(id: record.header.id, keyId: keyId) { $0.isDead(now: now, generation: [UInt8](keyshare.generation)) }
                continue
            }
            do {
                if let presignature = try PreSignature.restored(from: record, keyshare: keyshare) { usable.append(presignature) }
            } catch {
                // It does not open under this keyshare: removed if it is still exactly what failed.
                try await shelf.remove(id: record.header.id, keyId: keyId) { stored in
                    if case .record(let now) = stored { return now == record }
                    return true
                }
            }
        }
        return usable.sorted { $0.expiresAt < $1.expiresAt }
    }
}

extension PresignatureShelf.Stored {
    /// Whether what is stored now is dead (`AppSession.isDead`) or corrupt; a missing record needs no removal
    /// but its index entry does.
    func isDead(now: UInt64, generation: [UInt8]) -> Bool {
        switch self {
        case .missing, .corrupt: return true
        case .record(let record): return AppSession.isDead(record, now: now, generation: generation)
        }
    }
}
