import Foundation
import MPCCrypto
import SilentShardCore

/// Backups that know their generation (`KeyshareBackup` version 2, `BackupState`, `BackupSink`).
extension DuoSession {
    /// Called with every new generation of a key (keygen, import, refresh, and a
    /// reconcile that promotes) after the nodes committed it and before the previous generation is
    /// discarded; nil (the default) for none. See `BackupSink`.
    public var backupSink: (any BackupSink)? {
        get { core.backupSink }
        set { core.backupSink = newValue }
    }

    /// Receives this session's operation and step events (`SilentShardEvent`: names, key ids, bytes,
    /// durations, error kinds — never secrets or tokens); `SilentShardLoggers.none` by default.
    public var logger: any SilentShardLogger {
        get { core.logger }
        set { core.logger = newValue }
    }

    /// Whether the newest backup this app made of `keyId` holds the key's current generation.
    /// Throws `keyNotFound` when the app holds no current share of the key.
    public func backupState(keyId: String) async throws(SilentShardError) -> BackupState {
        try await core.backupState(keyId: keyId)
    }

    /// Seals `keyshare` (the app's current share of its key) under `password`
    /// (`KeyshareBackup.seal(_:password:limits:)`, recording its key id and generation), hands the blob
    /// to `store` — where the app keeps backups — and, once `store` returned, records the backup, so
    /// `backupState` says `current` while it is the key's current generation. A share that is not the
    /// current one is `staleKeyshare`; an error thrown by `store` is `storage` and records nothing.
    public func backup(keyshare: Keyshare, password: String, limits: Argon2id.Limits = .moderate,
                       store: (Data) async throws -> Void) async throws(SilentShardError) {
        try await core.observed("backup", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.backup(keyshare, password: password, limits: limits, store: store)
        }
    }

    /// Restores a keyshare opened from a backup (`KeyshareBackup.openKeyshare(_:password:)`) as the app's
    /// current share of its key once the node confirms it is the key's current generation (one reconcile
    /// step, with this session's device key; the app's record, if any, is settled first, and replaced
    /// when it is the one that is behind). A backup of another generation is `staleBackup`, naming its
    /// generation, and the app's record is left as it was. Returns the current keyshare. Run it before
    /// other operations on the key (it is not serialized with them).
    public func restoreBackup(_ keyshare: Keyshare) async throws(SilentShardError) -> Keyshare {
        try await core.observed("restoreBackup", keyId: keyshare.keyId) { () throws(SilentShardError) in
            try await core.restore(keyshare)
        }
    }
}
