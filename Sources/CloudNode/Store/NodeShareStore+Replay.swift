import Foundation
import SessionEngine

/// The node's durable replay store (session.md §9.6): every accepted SETUP's `instance_id`, kept until
/// its retention passes, as a unique-key insert in the node's database — so a restarted node, and every
/// process sharing the database, refuses a SETUP seen before. `SetupValidator`'s in-memory
/// `ReplayWindow` stays in front of it as a cheap first filter.
///
/// Writes go through a second connection without a flush per commit (SQLite `synchronous = NORMAL`
/// in WAL mode, PostgreSQL `synchronous_commit = off`): durable across process crashes, not across
/// power loss (PostgreSQL: a server crash may lose the last fraction of a second), and no flush on the
/// signing path. A replayed SETUP gains an attacker nothing beyond a session it cannot continue (it
/// has no session keys); the store only keeps nodes from doing that work twice and keeps ids single-use.
///
/// The insert is `INSERT … ON CONFLICT DO NOTHING`: of concurrent inserts of one id (any processes),
/// exactly one changes a row; the others wait for it and then count as replays.
extension NodeShareStore {
    /// Records `instanceID` until `retentionMilliseconds` after `nowMilliseconds`; `replay` if it is
    /// still held. Expired ids are forgotten on the way (all of them on SQLite; a bounded batch that
    /// no other process is deleting on PostgreSQL).
    package func recordSessionInstance(_ instanceID: InstanceID, nowMilliseconds: UInt64,
                                      retentionMilliseconds: UInt64) throws(NodeStoreError) {
        let now = Int64(clamping: nowMilliseconds)
        let expiry = Int64(clamping: nowMilliseconds.addingReportingOverflow(retentionMilliseconds).overflow
            ? UInt64.max : nowMilliseconds + retentionMilliseconds)
        let inserted = try replayDatabase.transaction(retryable: true) { db throws(NodeStoreError) -> Bool in
            switch db.dialect {
            case .sqlite:
                try db.run("DELETE FROM seen_instances WHERE expires_at <= ?", [.integer(now)])
            case .postgres:
                try db.run("DELETE FROM seen_instances WHERE instance_id = ? AND expires_at <= ?",
                           [.blob(instanceID.bytes), .integer(now)])
                try db.run("""
                    DELETE FROM seen_instances WHERE instance_id IN (
                        SELECT instance_id FROM seen_instances WHERE expires_at <= ? LIMIT 32 FOR UPDATE SKIP LOCKED)
                    """, [.integer(now)])
            }
            return try db.run("""
                INSERT INTO seen_instances (instance_id, expires_at) VALUES (?, ?)
                ON CONFLICT (instance_id) DO NOTHING
                """, [.blob(instanceID.bytes), .integer(expiry)]) == 1
        }
        guard inserted else { throw .replay }
    }
}
