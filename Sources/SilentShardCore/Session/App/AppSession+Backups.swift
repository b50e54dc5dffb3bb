import Foundation
import MPCCrypto

/// Backups that know their generation (every mode): the `BackupSink` called inside the staged → promote
/// flow, the key's `BackupState`, sealing a backup through the session, and restoring one with the
/// check that it is still the key's current generation.
extension AppSession {
    /// The app's sink for new generations, or nil.
    package var backupSink: (any BackupSink)? {
        get { sinkBox.withLock { $0 } }
        set { sinkBox.withLock { $0 = newValue } }
    }

    /// `promote` of a new generation `keyshare`, with its backup first: the sink (if any) is offered the
    /// keyshare after every node committed it and before the app's record drops the previous generation;
    /// the backup record follows the promote, so that a crash in between can only make the state say
    /// `stale` for a backup that exists (never `current` for one that does not).
    package func backingUp(_ keyshare: Keyshare,
                           promote: @escaping () async throws(SilentShardError) -> Void) -> () async throws(SilentShardError) -> Void {
        { [self] () throws(SilentShardError) in
            var stored = false
            if let sink = backupSink {
                do {
                    try await sink.storeBackup(of: keyshare)
                    stored = true
                } catch {
                    // The nodes committed: the operation goes on; the state will say the backup is stale.
                }
            }
            try await promote()
            if stored { try? await recordBackup(of: keyshare) }
        }
    }

    /// The state of the newest backup of `keyId` against the app's current share.
    package func backupState(keyId: String) async throws(SilentShardError) -> BackupState {
        let backup = try await backupRecord(keyId: keyId)
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let share = record?.current else { throw .keyNotFound(keyId: keyId) }
        guard let backup else { return .none }
        let current = try AppStoredShare.decode(share, mode: mode).keyshare
        return backup.generation == [UInt8](current.generation) ? .current : .stale(since: Data(backup.generation))
    }

    /// Seals `keyshare` under `password` (`KeyshareBackup` version 2) and records that a backup of its
    /// generation exists.
    package func backup(_ keyshare: Keyshare, password: String, limits: Argon2id.Limits) async throws(SilentShardError) -> Data {
        try check(keyshare)
        let blob: Data
        do { blob = try KeyshareBackup.seal(keyshare, password: password, limits: limits) } catch { throw SilentShardError(storage: error) }
        try await recordBackup(of: keyshare)
        return blob
    }

    /// Makes a backed-up keyshare the app's current one after checking it is the key's current
    /// generation: against the app's record when there is one (settled first), else with the nodes (a
    /// reconcile step; on any failure the record written for it is removed again). A backup of another
    /// generation is `staleBackup`, naming it; nothing is changed then.
    package func restore(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        let keyId = keyshare.keyId
        let existing: KeyshareRecord?
        do { existing = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        if existing != nil {
            let current = existing?.staged == nil
                ? try existing.flatMap { $0.current }.map { share throws(SilentShardError) in try AppStoredShare.decode(share, mode: mode).keyshare }
                : try await reconcile(keyId: keyId)
            guard let current, current.generation == keyshare.generation else {
                throw .staleBackup(keyId: keyId, generation: keyshare.generation)
            }
            return current
        }
        do {
            try await storageClient.write(KeyshareRecord(keyId: keyId, current: AppStoredShare.encode(keyshare, digest: nil, mode: mode)))
        } catch { throw SilentShardError(storage: error) }
        do throws(SilentShardError) {
            let settled = try await reconcile(keyId: keyId)
            guard settled.generation == keyshare.generation else { throw .staleBackup(keyId: keyId, generation: keyshare.generation) }
        } catch {
            try? await storageClient.delete(keyId: keyId)
            if case .staleKeyshare = error { throw .staleBackup(keyId: keyId, generation: keyshare.generation) }
            throw error
        }
        try? await recordBackup(of: keyshare)
        return keyshare
    }

    private func recordBackup(of keyshare: Keyshare) async throws(SilentShardError) {
        let record = AppBackupRecord(generation: [UInt8](keyshare.generation), madeAtMilliseconds: clock.milliseconds)
        do {
            try await storageClient.write(KeyshareRecord(keyId: AppBackupRecord.recordId(keyId: keyshare.keyId),
                                                         current: StoredShare(kind: .sdkRecord, bytes: record.encoded)))
        } catch { throw SilentShardError(storage: error) }
    }

    private func backupRecord(keyId: String) async throws(SilentShardError) -> AppBackupRecord? {
        let stored: KeyshareRecord?
        do { stored = try await storageClient.read(keyId: AppBackupRecord.recordId(keyId: keyId)) } catch {
            throw SilentShardError(storage: error)
        }
        guard let stored else { return nil }
        guard let share = stored.current, share.kind == .sdkRecord, let record = AppBackupRecord(encoded: [UInt8](share.bytes)) else {
            throw .storage(reason: "backup record for key \(keyId) is malformed")
        }
        return record
    }
}
