import Foundation

/// Versioned schema migrations for both engines. Each migration has a number and one script per
/// dialect; the `schema_migrations` table lists the numbers applied. At start, `NodeShareStore` runs
/// every missing migration and the master-key check in **one** transaction, holding the migrations
/// lock (PostgreSQL: a transaction-scoped advisory lock; SQLite: `BEGIN IMMEDIATE`), so processes
/// starting together apply each migration exactly once and never see half a schema. A database with a
/// migration newer than this build knows is refused (`schemaTooNew`) rather than used.
///
/// Migration 1 is the schema of the SQLite-only releases, written with `IF NOT EXISTS`, so an existing
/// SQLite file (which has no `schema_migrations` table yet) opens and is recorded at version 1.
/// New migrations are appended; an applied one is never edited.
enum NodeStoreMigrations {
    struct Migration {
        let version: Int
        let sqlite: String
        let postgres: String

        func script(_ dialect: StoreDialect) -> String { dialect == .sqlite ? sqlite : postgres }
    }

    static let all: [Migration] = [
        Migration(version: 1, sqlite: """
            CREATE TABLE IF NOT EXISTS meta (
                name TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS keyshares (
                key_id TEXT NOT NULL, slot INTEGER NOT NULL, gen BLOB NOT NULL, kind INTEGER NOT NULL,
                digest BLOB NOT NULL, nonce BLOB NOT NULL, sealed BLOB NOT NULL, updated_at INTEGER NOT NULL,
                PRIMARY KEY (key_id, slot)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS decisions (
                key_id TEXT NOT NULL, gen BLOB NOT NULL, outcome INTEGER NOT NULL, decided_at INTEGER NOT NULL,
                PRIMARY KEY (key_id, gen)) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS presignatures (
                presig_id BLOB PRIMARY KEY NOT NULL, key_id TEXT NOT NULL, gen BLOB NOT NULL,
                party INTEGER NOT NULL, device_key BLOB NOT NULL, expires_at INTEGER NOT NULL,
                created_at INTEGER NOT NULL, nonce BLOB NOT NULL, sealed BLOB NOT NULL) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS presignatures_by_key ON presignatures (key_id);
            CREATE INDEX IF NOT EXISTS presignatures_by_device ON presignatures (device_key);
            CREATE TABLE IF NOT EXISTS finish_records (
                presig_id BLOB PRIMARY KEY NOT NULL, key_id TEXT NOT NULL, request_hash BLOB NOT NULL,
                response BLOB NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS bans (
                device_key BLOB PRIMARY KEY NOT NULL, reason TEXT NOT NULL, instance_id BLOB NOT NULL,
                banned_at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS seen_instances (
                instance_id BLOB PRIMARY KEY NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS seen_instances_by_expiry ON seen_instances (expires_at);
            CREATE TABLE IF NOT EXISTS key_owners (
                key_id TEXT PRIMARY KEY NOT NULL, subject TEXT NOT NULL, created_at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS leases (
                key_id TEXT PRIMARY KEY NOT NULL, holder BLOB NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
            CREATE TABLE IF NOT EXISTS audit_log (
                id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, operation TEXT NOT NULL,
                key_id TEXT, party TEXT, outcome TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS audit_log_by_key ON audit_log (key_id);
            """, postgres: """
            CREATE TABLE meta (name TEXT PRIMARY KEY, value BYTEA NOT NULL);
            CREATE TABLE keyshares (
                key_id TEXT NOT NULL, slot BIGINT NOT NULL, gen BYTEA NOT NULL, kind BIGINT NOT NULL,
                digest BYTEA NOT NULL, nonce BYTEA NOT NULL, sealed BYTEA NOT NULL, updated_at BIGINT NOT NULL,
                PRIMARY KEY (key_id, slot));
            CREATE TABLE decisions (
                key_id TEXT NOT NULL, gen BYTEA NOT NULL, outcome BIGINT NOT NULL, decided_at BIGINT NOT NULL,
                PRIMARY KEY (key_id, gen));
            CREATE TABLE presignatures (
                presig_id BYTEA PRIMARY KEY, key_id TEXT NOT NULL, gen BYTEA NOT NULL,
                party BIGINT NOT NULL, device_key BYTEA NOT NULL, expires_at BIGINT NOT NULL,
                created_at BIGINT NOT NULL, nonce BYTEA NOT NULL, sealed BYTEA NOT NULL);
            CREATE INDEX presignatures_by_key ON presignatures (key_id);
            CREATE INDEX presignatures_by_device ON presignatures (device_key);
            CREATE TABLE finish_records (
                presig_id BYTEA PRIMARY KEY, key_id TEXT NOT NULL, request_hash BYTEA NOT NULL,
                response BYTEA NOT NULL, expires_at BIGINT NOT NULL);
            CREATE TABLE bans (
                device_key BYTEA PRIMARY KEY, reason TEXT NOT NULL, instance_id BYTEA NOT NULL,
                banned_at BIGINT NOT NULL);
            CREATE TABLE seen_instances (instance_id BYTEA PRIMARY KEY, expires_at BIGINT NOT NULL);
            CREATE INDEX seen_instances_by_expiry ON seen_instances (expires_at);
            CREATE TABLE key_owners (key_id TEXT PRIMARY KEY, subject TEXT NOT NULL, created_at BIGINT NOT NULL);
            CREATE TABLE leases (key_id TEXT PRIMARY KEY, holder BYTEA NOT NULL, expires_at BIGINT NOT NULL);
            CREATE TABLE audit_log (
                id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL, operation TEXT NOT NULL,
                key_id TEXT, party TEXT, outcome TEXT NOT NULL);
            CREATE INDEX audit_log_by_key ON audit_log (key_id);
            """),
        // 2: the process holding a lease (NodeShareStore+Leases, LeaseProcess).
        Migration(version: 2, sqlite: "ALTER TABLE leases ADD COLUMN process TEXT",
                  postgres: "ALTER TABLE leases ADD COLUMN process TEXT"),
        // 3: the parent of each hard-derived child, so a parent's new generation retires its children
        // (NodeShareStore+Shares, security review finding 1).
        Migration(version: 3, sqlite: """
            CREATE TABLE IF NOT EXISTS key_parents (key_id TEXT PRIMARY KEY NOT NULL, parent_key_id TEXT NOT NULL, created_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS key_parents_by_parent ON key_parents (parent_key_id);
            """, postgres: """
            CREATE TABLE IF NOT EXISTS key_parents (key_id TEXT PRIMARY KEY, parent_key_id TEXT NOT NULL, created_at BIGINT NOT NULL);
            CREATE INDEX IF NOT EXISTS key_parents_by_parent ON key_parents (parent_key_id);
            """),
        // 4: the derivation path of each child, and a tombstone for each retired child (its parent, path and
        // owner), so its owner is told KEY_RETIRED and where to derive it again (security review finding 1).
        Migration(version: 4, sqlite: """
            ALTER TABLE key_parents ADD COLUMN path BLOB NOT NULL DEFAULT x'';
            CREATE TABLE IF NOT EXISTS retired_keys (key_id TEXT PRIMARY KEY NOT NULL, parent_key_id TEXT NOT NULL, path BLOB NOT NULL, subject TEXT NOT NULL, retired_at INTEGER NOT NULL);
            """, postgres: """
            ALTER TABLE key_parents ADD COLUMN IF NOT EXISTS path BYTEA NOT NULL DEFAULT ''::bytea;
            CREATE TABLE IF NOT EXISTS retired_keys (key_id TEXT PRIMARY KEY, parent_key_id TEXT NOT NULL, path BYTEA NOT NULL, subject TEXT NOT NULL, retired_at BIGINT NOT NULL);
            """),
        // 5: the session.md §9.5 limits that count events over time, shared by every process on the database
        // (NodeShareStore+RateLimits, proposal P5): one row per counted event, and one per blocked address.
        Migration(version: 5, sqlite: """
            CREATE TABLE IF NOT EXISTS rate_events (id INTEGER PRIMARY KEY AUTOINCREMENT, bucket BLOB NOT NULL, at INTEGER NOT NULL, expires_at INTEGER NOT NULL);
            CREATE INDEX IF NOT EXISTS rate_events_by_bucket ON rate_events (bucket, at);
            CREATE INDEX IF NOT EXISTS rate_events_by_expiry ON rate_events (expires_at);
            CREATE TABLE IF NOT EXISTS rate_blocks (bucket BLOB PRIMARY KEY NOT NULL, blocked_until INTEGER NOT NULL) WITHOUT ROWID;
            CREATE INDEX IF NOT EXISTS rate_blocks_by_expiry ON rate_blocks (blocked_until);
            """, postgres: """
            CREATE TABLE IF NOT EXISTS rate_events (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, bucket BYTEA NOT NULL, at BIGINT NOT NULL, expires_at BIGINT NOT NULL);
            CREATE INDEX IF NOT EXISTS rate_events_by_bucket ON rate_events (bucket, at);
            CREATE INDEX IF NOT EXISTS rate_events_by_expiry ON rate_events (expires_at);
            CREATE TABLE IF NOT EXISTS rate_blocks (bucket BYTEA PRIMARY KEY, blocked_until BIGINT NOT NULL);
            CREATE INDEX IF NOT EXISTS rate_blocks_by_expiry ON rate_blocks (blocked_until);
            """),
        // 6: the presignature epoch (second security review finding 1, NodeShareStore+RestoreFence): every
        // presignature row carries the epoch it was stored in; a restore fence starts a new epoch, deletes
        // the older rows and is recorded in store_fences. Rows existing now get the epoch created here.
        Migration(version: 6, sqlite: """
            ALTER TABLE presignatures ADD COLUMN epoch BLOB NOT NULL DEFAULT x'';
            INSERT OR IGNORE INTO meta (name, value) VALUES ('presign_epoch', randomblob(16));
            UPDATE presignatures SET epoch = (SELECT value FROM meta WHERE name = 'presign_epoch');
            CREATE TABLE IF NOT EXISTS store_fences (id INTEGER PRIMARY KEY AUTOINCREMENT, at INTEGER NOT NULL, reason TEXT NOT NULL, old_epoch BLOB NOT NULL, new_epoch BLOB NOT NULL, identity_before TEXT NOT NULL, identity_after TEXT NOT NULL, presignatures_deleted INTEGER NOT NULL);
            """, postgres: """
            ALTER TABLE presignatures ADD COLUMN IF NOT EXISTS epoch BYTEA NOT NULL DEFAULT ''::bytea;
            INSERT INTO meta (name, value) VALUES ('presign_epoch', uuid_send(gen_random_uuid())) ON CONFLICT (name) DO NOTHING;
            UPDATE presignatures SET epoch = (SELECT value FROM meta WHERE name = 'presign_epoch');
            CREATE TABLE IF NOT EXISTS store_fences (id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY, at BIGINT NOT NULL, reason TEXT NOT NULL, old_epoch BYTEA NOT NULL, new_epoch BYTEA NOT NULL, identity_before TEXT NOT NULL, identity_after TEXT NOT NULL, presignatures_deleted BIGINT NOT NULL);
            """),
        // 7: the audit log's retention (security review 2, finding 4): the purge deletes lines by time.
        Migration(version: 7, sqlite: "CREATE INDEX IF NOT EXISTS audit_log_by_time ON audit_log (at)",
                  postgres: "CREATE INDEX IF NOT EXISTS audit_log_by_time ON audit_log (at)"),
        // 8: one device's DKLs23 checks one at a time across the processes of a cluster (issue 33 item 4,
        // NodeShareStore+DeviceCheckLeases): a lease row per device while a step over its messages runs.
        Migration(version: 8, sqlite: """
            CREATE TABLE IF NOT EXISTS device_check_leases (device_key BLOB PRIMARY KEY NOT NULL, holder BLOB NOT NULL, expires_at INTEGER NOT NULL) WITHOUT ROWID;
            """, postgres: """
            CREATE TABLE IF NOT EXISTS device_check_leases (device_key BYTEA PRIMARY KEY, holder BYTEA NOT NULL, expires_at BIGINT NOT NULL);
            """),
    ]

    /// The highest migration this build knows.
    static var latest: Int { all.map(\.version).max() ?? 0 }

    /// Applies the missing migrations inside the caller's transaction (which holds the migrations
    /// lock); returns the versions applied.
    @discardableResult
    static func apply(_ db: any StoreSQL, now: Int64) throws(NodeStoreError) -> [Int] {
        try db.lock(.migrations)
        try db.execute(db.dialect == .sqlite
            ? "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY NOT NULL, applied_at INTEGER NOT NULL)"
            : "CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)")
        var applied = Set<Int64>()
        for row in try db.query("SELECT version FROM schema_migrations", []) { applied.insert(try row.integer(0)) }
        if let newest = applied.max(), newest > Int64(latest) { throw .schemaTooNew(version: Int(newest)) }
        var done: [Int] = []
        for migration in all where !applied.contains(Int64(migration.version)) {
            try db.execute(migration.script(db.dialect))
            try db.run("INSERT INTO schema_migrations (version, applied_at) VALUES (?, ?)",
                       [.integer(Int64(migration.version)), .integer(now)])
            done.append(migration.version)
        }
        return done
    }
}
