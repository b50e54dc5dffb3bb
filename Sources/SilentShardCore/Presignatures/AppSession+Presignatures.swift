import Foundation
import MPCCrypto

/// The app's presignature records (`PresignatureShelf`) as the session sees them: kept in its
/// `StorageClient`, and dropped for a key's older generations once a new one is current.
extension AppSession {
    /// This session's presignature records.
    package var presignatures: PresignatureShelf { PresignatureShelf(storage: storageClient) }

    /// `promote` of a new generation `keyshare` as every commit and promoting reconcile runs it: its backup
    /// first (`backingUp`), then the promote, then the records of presignatures of every other generation
    /// of the key are deleted (session.md §8.2: the nodes deleted their halves in the commit; the app's
    /// could never finish again). A failure there changes nothing for the operation: the records are
    /// dropped again when the key's presignatures are next listed.
    package func promoting(_ keyshare: Keyshare,
                           promote: @escaping () async throws(SilentShardError) -> Void) -> () async throws(SilentShardError) -> Void {
        let promoteWithBackup = backingUp(keyshare, promote: promote)
        return { [self] () throws(SilentShardError) in
            try await promoteWithBackup()
            await dropPresignatures(keyId: keyshare.keyIdBytes, except: [UInt8](keyshare.generation))
        }
    }

    /// Deletes the records of `keyId`'s presignatures of any generation but `generation`.
    package func dropPresignatures(keyId: [UInt8], except generation: [UInt8]) async {
        guard keyId.count == 32, let records = try? await presignatures.records(keyId: keyId) else { return }
        for record in records where record.header.generation != generation {
            try? await presignatures.remove(id: record.header.id, keyId: keyId) { stored in
                if case .record(let now) = stored { return now.header.generation != generation }
                return true
            }
        }
    }
}
