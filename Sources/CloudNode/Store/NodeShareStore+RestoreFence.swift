import Foundation
import MPCCrypto

/// One restore fence, as recorded in `store_fences` (second security review finding 1).
package struct StoreFence: Sendable, Equatable {
    package let at: Date
    /// Why: the operator's reason (`silentshard node restore-fence`) or the mismatch the node detected.
    package let reason: String
    package let oldEpoch: [UInt8]
    package let newEpoch: [UInt8]
    /// The store's identity before and after (`PostgresStoreIdentity`, or the SQLite instance and counter).
    package let identityBefore: String
    package let identityAfter: String
    /// Unused presignatures of older epochs deleted by the fence.
    package let presignaturesDeleted: Int
}

/// Restore detection state of one store instance (`NodeShareStore.restoreGuard`).
final class RestoreGuard: @unchecked Sendable {
    private let lock = NSLock()
    private var tableOID: Int64?
    private var checkedReconnections = 0
    private var identityCheckDue = false
    private var warnedUnreadable = false
    private var lastWitness: StoreWitness.Content?
    private var fenceDue: String?
    /// SQLite: the witness file beside the database.
    let witness: StoreWitness?
    /// Where detected restores and fences are logged.
    let log: @Sendable (String) -> Void

    init(location: NodeStoreLocation, log: @escaping @Sendable (String) -> Void) {
        if case .sqlite(let path) = location { witness = StoreWitness(databasePath: path) } else { witness = nil }
        self.log = log
    }

    private func locked<T>(_ body: () -> T) -> T {
        lock.lock()
        defer { lock.unlock() }
        return body()
    }

    /// The `presignatures` table OID seen at the last identity check (PostgreSQL).
    var expectedTableOID: Int64? { locked { tableOID } }

    func checked(tableOID: Int64?, reconnections: Int) {
        locked {
            self.tableOID = tableOID
            checkedReconnections = reconnections
            identityCheckDue = false
        }
    }

    func markIdentityCheckDue() { locked { identityCheckDue = true } }

    func isIdentityCheckDue(reconnections: Int) -> Bool {
        locked { identityCheckDue || reconnections != checkedReconnections }
    }

    /// SQLite: the newest witness content this instance committed (at open, in consuming transactions).
    var lastCommittedWitness: StoreWitness.Content? { locked { lastWitness } }

    func committed(_ content: StoreWitness.Content) {
        locked {
            if lastWitness?.instance != content.instance || (lastWitness?.counter ?? .min) < content.counter {
                lastWitness = content
            }
        }
    }

    /// A fence the next consuming call runs first (SQLite: the database went back under this instance).
    func scheduleFence(_ reason: String) { locked { fenceDue = reason } }

    func takeScheduledFence() -> String? {
        locked {
            defer { fenceDue = nil }
            return fenceDue
        }
    }

    /// True the first time only: an unreadable identity field is logged once per store instance.
    func shouldWarnUnreadable() -> Bool {
        locked {
            defer { warnedUnreadable = true }
            return !warnedUnreadable
        }
    }
}

/// Restore fencing (second security review finding 1; `docs/node-server.md` "Backup and restore"). A
/// consumed presignature is a deleted row; restoring a copy of the database made before the consumption
/// brings the row back without its finish record, and finishing it on a second message would give two
/// signatures with one nonce: the full key. So every presignature row carries the epoch it was stored in
/// (`meta.presign_epoch`), a fence starts a new epoch and deletes every older row, and
/// `consumePresignature` refuses a row of another epoch. The fence is run by the operator
/// (`silentshard node restore-fence`) or by the node itself when it sees that its database went back:
///
/// * PostgreSQL: the `PostgresStoreIdentity` recorded in `meta.store_identity` differs from the server's
///   (checked at open, after every reconnect, and the table OID in every consuming transaction);
/// * SQLite: the database is behind its `StoreWitness`, belongs to another instance, or has lost its
///   witness while holding presignature state (checked at open).
///
/// Finish records are kept: one answers only the byte-identical request with the response already given
/// (no new signature can come of it), and keeping them lets an app whose answer was lost still get it.
extension NodeShareStore {
    /// Invalidates every presignature stored before now, in one transaction: a new epoch, every row of
    /// an older one deleted, the fence recorded in `store_fences` and the audit log. Run it after
    /// restoring the database from a backup, before any node process of the role starts serving.
    @discardableResult
    package func restoreFence(reason: String) throws(NodeStoreError) -> StoreFence {
        let reconnectionsBefore = reconnections
        var tableOID: Int64?
        let (fence, witnessContent) = try transaction { db throws(NodeStoreError) -> (StoreFence, StoreWitness.Content?) in
            try db.lock(.migrations)
            switch db.dialect {
            case .postgres:
                let recorded = try recordedPostgresIdentity(db)
                let after = try observePostgresIdentity(db)
                tableOID = after.tableOID
                let fence = try recordFence(db, reason: reason, identityBefore: recorded?.description ?? "unrecorded",
                                            identityAfter: after.description)
                try setMeta(db, "store_identity", .blob(Array(after.description.utf8)))
                return (fence, nil)
            case .sqlite:
                let before = try sqliteIdentity(db)
                let content = StoreWitness.Content(instance: SecureRandom.bytes(count: 16), counter: 1)
                try setMeta(db, "store_instance", .blob(content.instance))
                try setMeta(db, "witness_counter", .integer(content.counter))
                return (try recordFence(db, reason: reason, identityBefore: before, identityAfter: Self.describe(content)), content)
            }
        }
        if let witnessContent { witnessCommitted(witnessContent) }
        restoreGuard.checked(tableOID: tableOID, reconnections: reconnectionsBefore)
        return fence
    }

    /// Every fence recorded, oldest first.
    package func storeFences() throws(NodeStoreError) -> [StoreFence] {
        try reading { db throws(NodeStoreError) -> [StoreFence] in
            var fences: [StoreFence] = []
            for row in try db.query("""
                SELECT at, reason, old_epoch, new_epoch, identity_before, identity_after, presignatures_deleted
                FROM store_fences ORDER BY id
                """, []) {
                fences.append(StoreFence(at: Date(timeIntervalSince1970: TimeInterval(try row.integer(0))),
                                         reason: try row.text(1), oldEpoch: try row.blob(2), newEpoch: try row.blob(3),
                                         identityBefore: try row.text(4), identityAfter: try row.text(5),
                                         presignaturesDeleted: Int(try row.integer(6))))
            }
            return fences
        }
    }

    /// The current presignature epoch (16 bytes).
    package func presignatureEpoch() throws(NodeStoreError) -> [UInt8] {
        try reading { db throws(NodeStoreError) -> [UInt8] in try currentEpoch(db) }
    }

    // MARK: Detection

    /// At open: compares the database with what the store recorded (PostgreSQL identity, SQLite witness)
    /// and fences on a mismatch, logging it; records the identity seen.
    func checkRestoreAtOpen() throws(NodeStoreError) {
        switch database.dialect {
        case .postgres: try checkPostgresIdentity(when: "at open")
        case .sqlite: try checkWitness()
        }
    }

    /// Before a consuming transaction (PostgreSQL): the identity check again when the pool reconnected
    /// since the last one, or a consuming transaction saw another `presignatures` table.
    func checkRestoreIfDue() throws(NodeStoreError) {
        if let reason = restoreGuard.takeScheduledFence() { logFence(try restoreFence(reason: reason)) }
        guard database.dialect == .postgres, restoreGuard.isIdentityCheckDue(reconnections: reconnections) else { return }
        try checkPostgresIdentity(when: "while serving")
    }

    /// Inside `consumePresignature`'s transaction, before the row is taken: a row of an older epoch (or, on
    /// PostgreSQL, a `presignatures` table other than the one the identity check saw) is refused as not
    /// found. SQLite: bumps the witness counter and returns the content to write after the commit.
    func restoreFenceCheck(_ db: any StoreSQL, presignatureId: [UInt8]) throws(NodeStoreError) -> StoreWitness.Content? {
        switch db.dialect {
        case .postgres:
            let reconnectionsBefore = reconnections
            if restoreGuard.isIdentityCheckDue(reconnections: reconnectionsBefore) {
                // A reconnect happened after `checkRestoreIfDue` (inside this transaction's connection):
                // compare here; a change refuses this presignature, and the next call fences first.
                let observed = try observePostgresIdentity(db)
                if let recorded = try recordedPostgresIdentity(db), !observed.changes(from: recorded).isEmpty {
                    restoreGuard.markIdentityCheckDue()
                    restoreGuard.log("SECURITY: the database changed under this node (restored?): presignature "
                                     + "refused; the store fences before the next one")
                    throw .presignatureNotFound
                }
                restoreGuard.checked(tableOID: observed.tableOID, reconnections: reconnectionsBefore)
            }
            guard let row = try db.first("""
                SELECT (SELECT 1 FROM presignatures WHERE presig_id = ?
                        AND epoch <> (SELECT value FROM meta WHERE name = 'presign_epoch'))::bigint,
                       'presignatures'::regclass::oid::bigint
                """, [.blob(presignatureId)]) else { throw .corrupt(reason: "no epoch check result") }
            if let expected = restoreGuard.expectedTableOID, try row.integer(1) != expected {
                restoreGuard.markIdentityCheckDue()
                restoreGuard.log("SECURITY: the presignatures table changed under this node (restored?): "
                                 + "presignature refused; the store fences before the next one")
                throw .presignatureNotFound
            }
            guard row.isNull(0) else { throw .presignatureNotFound }
            return nil
        case .sqlite:
            guard try db.first("""
                SELECT 1 FROM presignatures WHERE presig_id = ?
                AND epoch <> (SELECT value FROM meta WHERE name = 'presign_epoch')
                """, [.blob(presignatureId)]) == nil
            else { throw .presignatureNotFound }
            guard let instance = try db.first("SELECT value FROM meta WHERE name = 'store_instance'", [])?.blob(0),
                  let counter = try db.first(
                      "UPDATE meta SET value = value + 1 WHERE name = 'witness_counter' RETURNING value", [])?.integer(0)
            else { return nil }
            // The database went back under this running instance (a file restored in place): refused, and
            // the next call fences first.
            if let last = restoreGuard.lastCommittedWitness, last.instance == instance, counter <= last.counter {
                restoreGuard.scheduleFence("restore detected while serving: the database's counter went back "
                                           + "from \(last.counter) to \(counter - 1)")
                restoreGuard.log("SECURITY: the database went back under this node (restored while running?): "
                                 + "presignature refused; the store fences before the next one")
                throw .presignatureNotFound
            }
            return StoreWitness.Content(instance: instance, counter: counter)
        }
    }

    /// After `consumePresignature` committed (SQLite): the witness catches up with the database.
    func witnessCommitted(_ content: StoreWitness.Content?) {
        guard let content else { return }
        restoreGuard.committed(content)
        restoreGuard.witness?.write(content)
    }

    private var reconnections: Int { (database as? PostgresStoreDatabase)?.reconnections ?? 0 }

    private func observePostgresIdentity(_ db: any StoreSQL) throws(NodeStoreError) -> PostgresStoreIdentity {
        let (observed, unreadable) = try PostgresStoreIdentity.observe(db)
        if !unreadable.isEmpty, restoreGuard.shouldWarnUnreadable() {
            restoreGuard.log("restore detection: cannot read \(unreadable.joined(separator: "; ")); "
                             + "comparing the rest (grant pg_monitor to the node's role to check every field)")
        }
        return observed
    }

    private func checkPostgresIdentity(when: String) throws(NodeStoreError) {
        let reconnectionsBefore = reconnections
        var seen: PostgresStoreIdentity?
        let fence = try transaction { db throws(NodeStoreError) -> StoreFence? in
            try db.lock(.migrations)
            let observed = try observePostgresIdentity(db)
            seen = observed
            guard let recorded = try recordedPostgresIdentity(db) else {
                try setMeta(db, "store_identity", .blob(Array(observed.description.utf8)))
                return nil
            }
            let changes = observed.changes(from: recorded)
            var merged = observed  // a field unreadable now keeps its recorded value
            merged.systemIdentifier = observed.systemIdentifier ?? recorded.systemIdentifier
            merged.timeline = observed.timeline ?? recorded.timeline
            if merged != recorded { try setMeta(db, "store_identity", .blob(Array(merged.description.utf8))) }
            guard !changes.isEmpty else { return nil }
            return try recordFence(db, reason: "restore detected \(when): " + changes.joined(separator: ", "),
                             identityBefore: recorded.description, identityAfter: merged.description)
        }
        restoreGuard.checked(tableOID: seen?.tableOID, reconnections: reconnectionsBefore)
        if let fence { logFence(fence) }
    }

    private func checkWitness() throws(NodeStoreError) {
        guard let witness = restoreGuard.witness else { return }
        let (content, fence) = try transaction { db throws(NodeStoreError) -> (StoreWitness.Content, StoreFence?) in
            let instance = try db.first("SELECT value FROM meta WHERE name = 'store_instance'", [])?.blob(0)
            let counter = try db.first("SELECT value FROM meta WHERE name = 'witness_counter'", [])?.integer(0) ?? 0
            // Read inside the write transaction: every witness written so far holds a committed value.
            let state = witness.read()
            var mismatch: String?
            switch (instance, state) {
            case (nil, .missing):
                break
            case (nil, .present(let found)):
                mismatch = "the database has no store instance but its witness names \(Self.describe(found)): "
                    + "an older copy replaced it"
            case (_, .unreadable):
                mismatch = "the witness file \(witness.path) is unreadable"
            case (.some, .missing):
                mismatch = "the witness file \(witness.path) is missing for a database holding presignature state"
            case (.some(let instance), .present(let found)):
                if found.instance != instance {
                    mismatch = "the database is store instance \(Hex.encode(instance)), its witness names \(Self.describe(found))"
                } else if counter < found.counter {
                    mismatch = "the database's counter \(counter) is behind its witness's \(found.counter)"
                }
            }
            // A database without presignature state has nothing to reuse (a new database where an old one
            // was, say): it takes a new instance silently.
            let hasState = try db.first("SELECT 1 FROM presignatures UNION ALL SELECT 1 FROM finish_records LIMIT 1", []) != nil
            if mismatch != nil, !hasState {
                let content = StoreWitness.Content(instance: SecureRandom.bytes(count: 16), counter: 1)
                try setMeta(db, "store_instance", .blob(content.instance))
                try setMeta(db, "witness_counter", .integer(content.counter))
                return (content, nil)
            }
            if let mismatch {
                let before = try sqliteIdentity(db) + witnessDescription(state)
                let content = StoreWitness.Content(instance: SecureRandom.bytes(count: 16), counter: 1)
                try setMeta(db, "store_instance", .blob(content.instance))
                try setMeta(db, "witness_counter", .integer(content.counter))
                return (content, try recordFence(db, reason: "restore detected at open: " + mismatch, identityBefore: before,
                                           identityAfter: Self.describe(content)))
            }
            let content = StoreWitness.Content(instance: instance ?? SecureRandom.bytes(count: 16), counter: counter + 1)
            try setMeta(db, "store_instance", .blob(content.instance))
            try setMeta(db, "witness_counter", .integer(content.counter))
            return (content, nil)
        }
        witnessCommitted(content)
        if let fence { logFence(fence) }
    }

    private func logFence(_ fence: StoreFence) {
        restoreGuard.log("SECURITY: \(fence.reason). The store fenced itself: \(fence.presignaturesDeleted) unused "
                         + "presignature(s) of older epochs invalidated (apps drop theirs at their next reconcile); "
                         + "identity \(fence.identityBefore) → \(fence.identityAfter). If this database was restored "
                         + "on purpose, nothing else is needed; otherwise find out what replaced it (docs/node-server.md).")
    }

    // MARK: Helpers

    /// The fence itself, inside the caller's transaction.
    private func recordFence(_ db: any StoreSQL, reason: String, identityBefore: String,
                       identityAfter: String) throws(NodeStoreError) -> StoreFence {
        let oldEpoch = try currentEpoch(db)
        let newEpoch = SecureRandom.bytes(count: 16)
        try setMeta(db, "presign_epoch", .blob(newEpoch))
        let deleted = try db.run("DELETE FROM presignatures WHERE epoch <> ?", [.blob(newEpoch)])
        let at = now
        try db.run("""
            INSERT INTO store_fences (at, reason, old_epoch, new_epoch, identity_before, identity_after, presignatures_deleted)
            VALUES (?, ?, ?, ?, ?, ?, ?)
            """, [.integer(at), .text(reason), .blob(oldEpoch), .blob(newEpoch), .text(identityBefore),
                  .text(identityAfter), .integer(Int64(deleted))])
        try audit(db, "restore fence", keyId: nil, party: nil,
                  outcome: "\(reason); \(deleted) presignature(s) invalidated")
        return StoreFence(at: Date(timeIntervalSince1970: TimeInterval(at)), reason: reason, oldEpoch: oldEpoch,
                          newEpoch: newEpoch, identityBefore: identityBefore, identityAfter: identityAfter,
                          presignaturesDeleted: deleted)
    }

    private func currentEpoch(_ db: any StoreSQL) throws(NodeStoreError) -> [UInt8] {
        guard let epoch = try db.first("SELECT value FROM meta WHERE name = 'presign_epoch'", [])?.blob(0) else {
            throw .corrupt(reason: "no presignature epoch")
        }
        return epoch
    }

    private func recordedPostgresIdentity(_ db: any StoreSQL) throws(NodeStoreError) -> PostgresStoreIdentity? {
        guard let bytes = try db.first("SELECT value FROM meta WHERE name = 'store_identity'", [])?.blob(0) else { return nil }
        guard let identity = PostgresStoreIdentity(String(decoding: bytes, as: UTF8.self)) else {
            throw .corrupt(reason: "unreadable store identity")
        }
        return identity
    }

    private func sqliteIdentity(_ db: any StoreSQL) throws(NodeStoreError) -> String {
        let instance = try db.first("SELECT value FROM meta WHERE name = 'store_instance'", [])?.blob(0)
        let counter = try db.first("SELECT value FROM meta WHERE name = 'witness_counter'", [])?.integer(0)
        return "instance=\(instance.map(Hex.encode) ?? "?");counter=\(counter.map(String.init) ?? "?")"
    }

    private func witnessDescription(_ state: StoreWitness.State) -> String {
        switch state {
        case .missing: " (witness missing)"
        case .unreadable: " (witness unreadable)"
        case .present(let content): " (witness \(Self.describe(content)))"
        }
    }

    static func describe(_ content: StoreWitness.Content) -> String {
        "instance=\(Hex.encode(content.instance));counter=\(content.counter)"
    }

    private func setMeta(_ db: any StoreSQL, _ name: String, _ value: StoreValue) throws(NodeStoreError) {
        try db.run("""
            INSERT INTO meta (name, value) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value
            """, [.text(name), value])
    }
}
