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
                    events.emit(SilentShardEvent(phase: .stepFinished, operation: "backupSink", mode: mode, algorithm: algorithm,
                                                 keyId: keyshare.keyId, errorKind: "backupSinkFailed"))
                }
            }
            try await promote()
            if stored { try? await recordBackup(of: keyshare) }
        }
    }

    /// The state of the newest backup of `keyId` against the app's current share. While a share is
    /// staged (an operation in doubt, settled by `reconcile`), the state is not known to be current: a
    /// backup is reported `stale` (or `none`).
    package func backupState(keyId: String) async throws(SilentShardError) -> BackupState {
        let backup = try await backupRecord(keyId: keyId)
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        guard let share = record?.current else { throw .keyNotFound(keyId: keyId) }
        guard let backup else { return .none }
        let current = try AppStoredShare.decode(share, mode: mode).keyshare
        return backup.generation == [UInt8](current.generation) && record?.staged == nil
            ? .current : .stale(since: Data(backup.generation))
    }

    /// Seals `keyshare` (the app's current share of its key) under `password` (`KeyshareBackup` version 2),
    /// hands the blob to `store` (where the app keeps backups) and, once `store` returned, records that a
    /// backup of this generation exists. A share that is not the current one is `staleKeyshare`.
    package func backup(_ keyshare: Keyshare, password: String, limits: Argon2id.Limits,
                        store: (Data) async throws -> Void) async throws(SilentShardError) {
        try check(keyshare)
        let record: KeyshareRecord?
        do { record = try await storageClient.read(keyId: keyshare.keyId) } catch { throw SilentShardError(storage: error) }
        guard let share = record?.current, record?.staged == nil,
              try AppStoredShare.decode(share, mode: mode).keyshare.generation == keyshare.generation
        else { throw .staleKeyshare }
        let blob: Data
        do { blob = try KeyshareBackup.seal(keyshare, password: password, limits: limits) } catch { throw SilentShardError(storage: error) }
        do { try await store(blob) } catch { throw SilentShardError(storage: error) }
        try await recordBackup(of: keyshare)
    }

    /// Makes a backed-up keyshare the app's current share of its key once the nodes confirm it is the
    /// key's current generation (one reconcile step, with this session's device key). A backup of
    /// another generation is `staleBackup`, naming it, and the app's record is left as it was:
    ///
    /// * the app has a record: it is settled with the nodes first; if the nodes hold the backup's
    ///   generation, that is the result; if they hold the record's, the backup is stale; if the record
    ///   itself is stale (`staleKeyshare`, e.g. storage restored from an older device backup), the
    ///   backup replaces it for one more reconcile, and the old record comes back if that fails;
    /// * the app has no record (a wiped app): the backup is written as current and reconciled; on any
    ///   failure the record written for it is removed again.
    ///
    /// Not serialized with other share-changing operations on the same key: restore before using the key.
    package func restore(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try check(keyshare)
        let keyId = keyshare.keyId
        let existing: KeyshareRecord?
        do { existing = try await storageClient.read(keyId: keyId) } catch { throw SilentShardError(storage: error) }
        if existing != nil {
            do throws(SilentShardError) {
                let settled = try await reconcile(keyId: keyId)
                guard settled.generation == keyshare.generation else { throw .staleBackup(keyId: keyId, generation: keyshare.generation) }
                return settled
            } catch .staleKeyshare {
                // The app's record is behind the nodes: try the backup in its place.
            }
        }
        let restored = KeyshareRecord(keyId: keyId, current: AppStoredShare.encode(keyshare, digest: nil, mode: mode))
        do { try await storageClient.write(restored) } catch { throw SilentShardError(storage: error) }
        do throws(SilentShardError) {
            let settled = try await reconcile(keyId: keyId)
            guard settled.generation == keyshare.generation else { throw .staleBackup(keyId: keyId, generation: keyshare.generation) }
        } catch {
            await putBack(existing, replacing: restored)
            if case .staleKeyshare = error { throw .staleBackup(keyId: keyId, generation: keyshare.generation) }
            throw error
        }
        try? await recordBackup(of: keyshare)
        return keyshare
    }

    /// Undoes `restore`'s write: the previous record comes back (or none), but only while the record is
    /// still the one `restore` wrote.
    private func putBack(_ previous: KeyshareRecord?, replacing written: KeyshareRecord) async {
        guard (try? await storageClient.read(keyId: written.keyId)) == written else { return }
        if let previous {
            try? await storageClient.write(previous)
        } else {
            try? await storageClient.delete(keyId: written.keyId)
        }
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
