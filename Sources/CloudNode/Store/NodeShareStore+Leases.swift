import Foundation
import SilentShardCore

/// Per-key leases (session.md §7.2): at most one share-changing session (refresh, import, reconcile)
/// runs on a key at a time. The lease is a database row carrying its expiry, so every process that
/// opens the same database agrees, and a lease left by a crashed process ends at its expiry.
/// On PostgreSQL the read-check-write runs under the key's advisory lock, so two processes cannot
/// both see the lease free.
extension NodeShareStore {
    /// Takes the lease on `keyId` for `holder` (an opaque session id, e.g. the instance id) until
    /// `seconds` from now. Taking a lease one already holds extends it. An unexpired lease held by
    /// another session is `keyBusy`.
    public func acquireLease(keyId: String, holder: [UInt8], seconds: Int64) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        guard !holder.isEmpty, seconds > 0 else { throw .invalidArgument("lease holder and duration") }
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            let now = self.now
            if let row = try db.first("SELECT holder, expires_at FROM leases WHERE key_id = ?", [.text(id)]) {
                let holderNow = try row.blob(0)
                if holderNow != holder, try row.integer(1) > now { throw .keyBusy(keyId: id) }
            }
            try db.run("""
                INSERT INTO leases (key_id, holder, expires_at) VALUES (?, ?, ?)
                ON CONFLICT (key_id) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
                """, [.text(id), .blob(holder), .integer(now + seconds)])
        }
    }

    /// Releases `holder`'s lease on `keyId`; a lease held by someone else (or none) is left alone.
    public func releaseLease(keyId: String, holder: [UInt8]) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try transaction { db throws(NodeStoreError) in
            try db.lock(.key(id))
            try db.run("DELETE FROM leases WHERE key_id = ? AND holder = ?", [.text(id), .blob(holder)])
        }
    }
}
