import Foundation
import SilentShardCore

/// Per-key leases (session.md §7.2): at most one share-changing session (refresh, import, reconcile)
/// runs on a key at a time. The lease is a database row carrying its expiry, so every process that
/// opens the same database agrees, and a lease left by a crashed process ends at its expiry.
extension NodeShareStore {
    /// Takes the lease on `keyId` for `holder` (an opaque session id, e.g. the instance id) until
    /// `seconds` from now. Taking a lease one already holds extends it. An unexpired lease held by
    /// another session is `keyBusy`.
    public func acquireLease(keyId: String, holder: [UInt8], seconds: Int64) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        guard !holder.isEmpty, seconds > 0 else { throw .invalidArgument("lease holder and duration") }
        try transaction { db throws(NodeStoreError) in
            let now = self.now
            let existing = try sql { () throws(SQLiteError) -> (holder: [UInt8], expiresAt: Int64)? in
                let select = try db.prepare("SELECT holder, expires_at FROM leases WHERE key_id = ?")
                try select.bind([.text(id)])
                return try select.step() ? (try select.blob(0), try select.integer(1)) : nil
            }
            if let existing, existing.holder != holder, existing.expiresAt > now { throw .keyBusy(keyId: id) }
            try sql { () throws(SQLiteError) in
                try db.run("INSERT OR REPLACE INTO leases (key_id, holder, expires_at) VALUES (?, ?, ?)",
                           [.text(id), .blob(holder), .integer(now + seconds)])
            }
        }
    }

    /// Releases `holder`'s lease on `keyId`; a lease held by someone else (or none) is left alone.
    public func releaseLease(keyId: String, holder: [UInt8]) throws(NodeStoreError) {
        let id = try Self.canonicalKeyId(keyId)
        try transaction { db throws(NodeStoreError) in
            try sql { () throws(SQLiteError) in
                try db.run("DELETE FROM leases WHERE key_id = ? AND holder = ?", [.text(id), .blob(holder)])
            }
        }
    }
}
