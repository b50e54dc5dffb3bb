import Foundation
import SilentShardCore

/// The node's durable replay store (session.md §9.6): every accepted SETUP's `instance_id`, kept until
/// its retention passes, as a unique-key insert in the node's database — so a restarted node, and every
/// process sharing the database, refuses a SETUP seen before. `SetupValidator`'s in-memory
/// `ReplayWindow` stays in front of it as a cheap first filter.
///
/// Writes go through a second connection with `synchronous = NORMAL` (WAL): durable across process
/// crashes, not across power loss, and no fsync on the signing path. A replayed SETUP gains an attacker
/// nothing beyond a session it cannot continue (it has no session keys); the store only keeps nodes
/// from doing that work twice and keeps ids single-use.
extension NodeShareStore {
    /// Records `instanceID` until `retentionMilliseconds` after `nowMilliseconds`; `replay` if it is
    /// still held. Expired ids are forgotten in the same transaction.
    public func recordSessionInstance(_ instanceID: [UInt8], nowMilliseconds: UInt64,
                                      retentionMilliseconds: UInt64) throws(NodeStoreError) {
        try Self.require32(instanceID, "instance id")
        let now = Int64(clamping: nowMilliseconds)
        let expiry = Int64(clamping: nowMilliseconds.addingReportingOverflow(retentionMilliseconds).overflow
            ? UInt64.max : nowMilliseconds + retentionMilliseconds)
        let inserted = try replayConnection.withConnection { db throws(NodeStoreError) -> Bool in
            do throws(SQLiteTransactionError<NodeStoreError>) {
                return try db.transaction { () throws(NodeStoreError) -> Bool in
                    try sql { () throws(SQLiteError) -> Bool in
                        try db.run("DELETE FROM seen_instances WHERE expires_at <= ?", [.integer(now)])
                        let select = try db.prepare("SELECT 1 FROM seen_instances WHERE instance_id = ?")
                        try select.bind([.blob(instanceID)])
                        if try select.step() { return false }
                        try db.run("INSERT INTO seen_instances (instance_id, expires_at) VALUES (?, ?)",
                                   [.blob(instanceID), .integer(expiry)])
                        return true
                    }
                }
            } catch {
                throw NodeStoreError(error)
            }
        }
        guard inserted else { throw .replay }
    }
}
