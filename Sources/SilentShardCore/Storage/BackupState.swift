import Foundation

/// Whether the app's newest backup of a key still holds the key's current generation (as far as this
/// app knows: it records each backup it makes through a session or a `BackupSink`).
///
/// A refresh or recover gives the app's share of a key a new generation; a backup of an older one no
/// longer combines with the nodes' shares, so restoring it cannot sign. (Keygen, import and hard
/// derivation make a new key, whose first generation has no backup yet.) Make a new backup whenever the
/// state is not `current`.
public enum BackupState: Sendable, Equatable {
    /// No backup of this key was made through this app's session.
    case none
    /// The newest backup holds the current generation.
    case current
    /// The newest backup holds `since`, an older generation (32 bytes): it has been stale since the share
    /// moved on from it. `KeyshareBackup.info(_:)` shows which blob holds which generation.
    case stale(since: Data)
}

/// Where the SDK hands every new generation of a key for backup, if the app provides one
/// (`DuoSession.backupSink`, `TrioSession.backupSink`).
///
/// The SDK calls it inside the staged → promote flow of keygen, import, refresh, recover and hard
/// derivation, and of a reconcile that promotes: after every node committed the new generation and
/// before the app's record discards the previous one, so a backup of the new generation exists first.
/// If it throws, the operation still commits (the nodes already did) and the key's `BackupState` says
/// `stale` (or `none`) until a backup succeeds. A typical sink seals the keyshare with
/// `KeyshareBackup.seal(_:password:limits:)` under a key from the platform's key store and uploads it.
///
/// It runs on the operation's task, so the operation returns after it; keep it short or hand the work
/// off (the state is only `current` once it returned without error). It may be offered one generation
/// twice (a promote that failed, then the reconcile that promoted it): make it idempotent.
public protocol BackupSink: Sendable {
    /// Stores a backup of `keyshare` (the app's share of a new generation; secret — never log it).
    func storeBackup(of keyshare: Keyshare) async throws
}

/// The app's record of its newest backup of a key (no secrets), under `"~ss/backup/" + key id`:
/// `"SSBR" ‖ u8 version (1) ‖ generation (32) ‖ u64 made-at ms`.
package struct AppBackupRecord: Equatable, Sendable {
    package var generation: [UInt8]
    package var madeAtMilliseconds: UInt64

    package init(generation: [UInt8], madeAtMilliseconds: UInt64) {
        self.generation = generation
        self.madeAtMilliseconds = madeAtMilliseconds
    }

    private static let magic = Array("SSBR".utf8)
    private static let byteCount = 4 + 1 + 32 + 8

    package var encoded: [UInt8] {
        var out = Self.magic + [1] + generation
        for shift in stride(from: 56, through: 0, by: -8) { out.append(UInt8(truncatingIfNeeded: madeAtMilliseconds >> UInt64(shift))) }
        return out
    }

    /// nil for anything else than a version-1 record of this layout.
    package init?(encoded bytes: [UInt8]) {
        guard bytes.count == Self.byteCount, Array(bytes[0..<4]) == Self.magic, bytes[4] == 1 else { return nil }
        generation = Array(bytes[5..<37])
        madeAtMilliseconds = bytes[37...].reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// The record id of `keyId`'s backup record.
    package static func recordId(keyId: String) -> String { KeyId.backupPrefix + keyId }
}
