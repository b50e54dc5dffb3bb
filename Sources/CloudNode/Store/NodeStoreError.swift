import SilentShardCore

/// Every failure of the node's share store. Cases name key ids, generations' absence, and SQLite
/// result codes; they never carry share bytes, presignature secrets, master keys or request bodies.
///
/// (Named `NodeStoreError` rather than `StorageError` so that code importing both `CloudNode` and
/// `SilentShardCore` needs no module qualification.)
package enum NodeStoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key id is not a hex string (1–128 bytes).
    case invalidKeyId
    /// An argument has the wrong size (generation ids, digests and presignature ids are 32 bytes).
    case invalidArgument(String)
    /// The master key does not open this database (it was created with another key).
    case wrongMasterKey
    /// A sealed row failed authentication: altered, moved to another key id, slot or generation.
    case integrityFailure(keyId: String)
    /// A row or the database file is malformed (wrong column types, not a database).
    case corrupt(reason: String)
    /// Another PREPARED share (other gen or digest) already exists for this key id.
    case preparedConflict(keyId: String)
    /// Commit asked for a gen/digest the PREPARED share does not have, or nothing is prepared.
    case preparedMismatch(keyId: String)
    /// The (key id, gen) was already decided the other way (commit after abort or abort after commit).
    case alreadyDecided(keyId: String)
    /// No current share for this key id.
    case keyNotFound(keyId: String)
    /// A new key's commit named no owner: a key is never stored without one (security review finding 11).
    case ownerRequired(keyId: String)
    /// The generation named is not the key's current one.
    case staleGeneration(keyId: String)
    /// A direct commit found CURRENT at another generation than the one its session started from.
    case currentChanged(keyId: String)
    /// The session id (`instance_id`) is already in the replay store (session.md §9.6).
    case replay
    /// Another session holds the key's lease (session.md §7.2: one share-changing session per key).
    case keyBusy(keyId: String)
    /// The key already holds the maximum number of unused presignatures.
    case presignatureLimit(keyId: String)
    /// No presignature row and no finish record with this id.
    case presignatureNotFound
    /// The presignature was already consumed by a different request.
    case presignatureConsumed
    /// The presignature's row exists but is past `expires_at`.
    case presignatureExpired
    /// A presignature id is already stored.
    case duplicatePresignature
    /// The device is banned (session.md §9.4).
    case banned
    /// SQLite failed (result code and message; messages never include bound values).
    case database(code: Int32, message: String)
    /// PostgreSQL or libpq failed: the SQLSTATE (e.g. `08006` connection failure, `40P01` deadlock) and
    /// the server's primary message (never parameter values, never the connection password).
    case postgres(sqlState: String, message: String)
    /// The database's schema is newer than this build knows (applied migration `version`).
    case schemaTooNew(version: Int)
    /// A file-system call failed.
    case io(operation: String, errno: Int32)

    package var description: String {
        switch self {
        case .invalidKeyId: "invalid key id"
        case .invalidArgument(let what): "invalid argument: \(what)"
        case .wrongMasterKey: "the master key does not open this database"
        case .integrityFailure(let keyId): "sealed row for key \(keyId) failed authentication"
        case .corrupt(let reason): "corrupt store: \(reason)"
        case .preparedConflict(let keyId): "another prepared share exists for key \(keyId)"
        case .preparedMismatch(let keyId): "prepared share for key \(keyId) does not match"
        case .alreadyDecided(let keyId): "generation of key \(keyId) already decided"
        case .keyNotFound(let keyId): "no current share for key \(keyId)"
        case .ownerRequired(let keyId): "a new key needs an owner (key \(keyId))"
        case .staleGeneration(let keyId): "generation of key \(keyId) is not current"
        case .currentChanged(let keyId): "current generation of key \(keyId) changed during the session"
        case .replay: "session id seen before"
        case .keyBusy(let keyId): "key \(keyId) is leased by another session"
        case .presignatureLimit(let keyId): "presignature limit reached for key \(keyId)"
        case .presignatureNotFound: "presignature not found"
        case .presignatureConsumed: "presignature already consumed"
        case .presignatureExpired: "presignature expired"
        case .duplicatePresignature: "presignature id already stored"
        case .banned: "device is banned"
        case .database(let code, let message): "database error \(code): \(message)"
        case .postgres(let state, let message): "postgres error \(state): \(message)"
        case .schemaTooNew(let version): "the database schema (migration \(version)) is newer than this build"
        case .io(let operation, let errno): "\(operation) failed (errno \(errno))"
        }
    }

    init(_ error: SQLiteError) {
        self = error.isCorruption ? .corrupt(reason: error.message) : .database(code: error.code, message: error.message)
    }

    init(_ error: PostgresError) {
        self = error.sqlState == "XX001" || error.sqlState == "XX002"
            ? .corrupt(reason: error.message) : .postgres(sqlState: error.sqlState, message: error.message)
    }

    init(_ error: SQLiteTransactionError<NodeStoreError>) {
        switch error {
        case .database(let error): self.init(error)
        case .body(let error): self = error
        }
    }
}

/// Runs SQLite calls, mapping their failures to `NodeStoreError`.
@inline(__always) @discardableResult
func sql<T>(_ body: () throws(SQLiteError) -> T) throws(NodeStoreError) -> T {
    do { return try body() } catch { throw NodeStoreError(error) }
}
