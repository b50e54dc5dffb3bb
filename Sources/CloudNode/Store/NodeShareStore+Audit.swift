import Foundation
import SilentShardCore

/// Reading the audit log. Lines are written inside the transactions they describe (refusals whose
/// transaction rolled back get their own); they hold operation, key id, party and outcome only.
extension NodeShareStore {
    /// Audit lines, oldest first; only those of `keyId` when given; at most `limit`.
    public func auditLog(keyId: String? = nil, limit: Int = 1000) throws(NodeStoreError) -> [AuditEntry] {
        let id = try keyId.map { (keyId) throws(NodeStoreError) in try Self.canonicalKeyId(keyId) }
        return try reading { db throws(SQLiteError) -> [AuditEntry] in
            let statement = try db.prepare(id == nil
                ? "SELECT id, at, operation, key_id, party, outcome FROM audit_log ORDER BY id LIMIT ?"
                : "SELECT id, at, operation, key_id, party, outcome FROM audit_log WHERE key_id = ? ORDER BY id LIMIT ?")
            try statement.bind((id.map { [SQLiteValue.text($0)] } ?? []) + [.integer(Int64(limit))])
            var entries: [AuditEntry] = []
            while try statement.step() {
                entries.append(AuditEntry(
                    id: try statement.integer(0),
                    at: Date(timeIntervalSince1970: TimeInterval(try statement.integer(1))),
                    operation: try statement.text(2),
                    keyId: statement.isNull(3) ? nil : try statement.text(3),
                    party: statement.isNull(4) ? nil : try statement.text(4),
                    outcome: try statement.text(5)))
            }
            return entries
        }
    }
}
