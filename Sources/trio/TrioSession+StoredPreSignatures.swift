import Foundation
import MPCCrypto
import SilentShardCore

/// Presignatures across app restarts (`docs/presignature-lifecycle.md`): every presignature is kept
/// sealed in the session's `StorageClient` from the moment it is handed out until it is finished and its
/// record has aged out.
extension TrioSession {
    /// How long after a presignature's expiry the app keeps its tombstone (session.md §8.2).
    static let tombstoneRetentionMilliseconds: UInt64 = 24 * 3600 * 1000

    /// The presignatures of `keyshare`'s key that this app holds and can still finish, soonest to expire
    /// first: unused ones (finish them on any message) and ones whose finish was recorded before an
    /// interruption (`PreSignature.pendingMessage` set: finish them on that message only, which resends
    /// the recorded request and returns the signature).
    ///
    /// `keyshare` must be the app's current share of its key (`staleKeyshare` otherwise). Records this
    /// app can never use again are deleted on the way: those of older generations (the nodes dropped
    /// their halves at the refresh), unused ones within 60 s of expiry, tombstones 24 h past expiry, and
    /// records that fail their integrity check.
    public func preSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try await core.observed("preSignatures", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await storedPreSignatures(keyshare: keyshare)
        }
    }

    func storedPreSignatures(keyshare: Keyshare) async throws(SilentShardError) -> [PreSignature] {
        try check(keyshare)
        let stored: KeyshareRecord?
        do { stored = try await core.storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        guard let current = stored?.current else { throw .keyNotFound(keyId: keyshare.keyId) }
        guard try AppStoredShare.decode(current, mode: .trio).keyshare.generation == keyshare.generation else {
            throw .staleKeyshare
        }
        let shelf = core.presignatures, keyId = keyshare.keyIdBytes
        let now = core.clock.milliseconds
        let margin = SessionConstants.presignatureAppMarginSeconds * 1000
        var usable: [PreSignature] = []
        for record in try await shelf.records(keyId: keyId) {
            let expires = record.header.expiresAtMilliseconds
            let live: Bool
            switch record.state {
            case .ready: live = now + margin < expires
            case .finishing, .finished: live = now < expires &+ Self.tombstoneRetentionMilliseconds
            }
            guard live, record.header.generation == [UInt8](keyshare.generation) else {
                try await shelf.remove(id: record.header.id, keyId: keyId)
                continue
            }
            do {
                if let presignature = try PreSignature.restored(from: record, keyshare: keyshare) { usable.append(presignature) }
            } catch {
                try await shelf.remove(id: record.header.id, keyId: keyId)
            }
        }
        return usable.sorted { $0.expiresAt < $1.expiresAt }
    }
}
