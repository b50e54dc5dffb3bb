import Foundation
import SessionEngine

/// Reading the audit log. Lines are written inside the transactions they describe (refusals whose
/// transaction rolled back get their own); they hold operation, key id, party and outcome only. Lines older
/// than the retention are deleted by the purge task (security review 2, finding 4: the log was unbounded).
extension NodeShareStore {
    /// How long audit lines are kept by default: 90 days (`silentshard node --audit-retention-days`).
    package static let defaultAuditRetention: TimeInterval = 90 * 24 * 3600

    /// Deletes audit lines older than `retention` seconds (at the store's clock); returns how many. A
    /// retention of 0 or less keeps everything. Deletes in batches of `batch` lines, one short transaction each,
    /// so the first purge after months of lines never holds the write lock long (SQLite has one writer: the
    /// presignature consumptions wait behind it).
    @discardableResult
    package func purgeAuditLog(olderThan retention: TimeInterval, batch: Int = 10_000) throws(NodeStoreError) -> Int {
        guard retention > 0 else { return 0 }
        let cutoff = now - Int64(min(retention, 1e15).rounded(.down))
        var total = 0
        while true {
            let deleted = try transaction { db throws(NodeStoreError) -> Int in
                try db.run("DELETE FROM audit_log WHERE id IN (SELECT id FROM audit_log WHERE at < ? ORDER BY id LIMIT ?)",
                           [.integer(cutoff), .integer(Int64(max(1, batch)))])
            }
            total += deleted
            if deleted < max(1, batch) { return total }
        }
    }

    /// Audit lines, oldest first; only those of `keyId` when given; at most `limit`.
    package func auditLog(keyId: String? = nil, limit: Int = 1000) throws(NodeStoreError) -> [AuditEntry] {
        let id = try keyId.map { (keyId) throws(NodeStoreError) in try Self.canonicalKeyId(keyId) }
        return try reading { db throws(NodeStoreError) -> [AuditEntry] in
            let rows = try db.query(id == nil
                ? "SELECT id, at, operation, key_id, party, outcome FROM audit_log ORDER BY id LIMIT ?"
                : "SELECT id, at, operation, key_id, party, outcome FROM audit_log WHERE key_id = ? ORDER BY id LIMIT ?",
                (id.map { [StoreValue.text($0)] } ?? []) + [.integer(Int64(limit))])
            var entries: [AuditEntry] = []
            for row in rows {
                entries.append(AuditEntry(
                    id: try row.integer(0),
                    at: Date(timeIntervalSince1970: TimeInterval(try row.integer(1))),
                    operation: try row.text(2),
                    keyId: row.isNull(3) ? nil : try row.text(3),
                    party: row.isNull(4) ? nil : try row.text(4),
                    outcome: try row.text(5)))
            }
            return entries
        }
    }
}
