import Foundation
import MPCCrypto

/// The two SQL engines the node store runs on. Store methods hold one SQL text for both; the dialect
/// covers the few places they differ (schema types, advisory locks, table locks, bounded purges).
enum StoreDialect: Sendable {
    case sqlite
    case postgres
}

/// A value bound to a parameter or read from a column (PostgreSQL: int8, bytea, text; SQLite: its
/// storage classes).
enum StoreValue: Sendable, Equatable {
    case integer(Int64)
    case blob([UInt8])
    case text(String)
    case null
}

/// What a per-transaction lock protects (PostgreSQL: `pg_advisory_xact_lock`; SQLite: nothing, its
/// single writer lock already serializes every transaction).
enum StoreLockScope {
    /// Every share-changing write of one key id (commits, prepare, abort, leases, storing presignatures).
    case key(String)
    /// Bans and presignature stores of one device.
    case device([UInt8])
    /// Schema migrations and the master-key check at start.
    case migrations
    /// One session.md §9.5 counter shared by the cluster (`NodeShareStore+RateLimits`): its 32-byte bucket.
    case rateBucket([UInt8])

    /// The 64-bit advisory lock key: the first 8 bytes of SHA-256 over a namespaced name.
    var advisoryKey: Int64 {
        let name: [UInt8]
        switch self {
        case .key(let id): name = Array("silentshard/key/\(id)".utf8)
        case .device(let bytes): name = Array("silentshard/device/".utf8) + bytes
        case .migrations: name = Array("silentshard/migrations".utf8)
        case .rateBucket(let bucket): name = Array("silentshard/rate/".utf8) + bucket
        }
        return SHA256.hash(name).prefix(8).reduce(Int64(0)) { $0 << 8 | Int64($1) }
    }
}

/// One row of a result. Accessors are strict: a value of another type than the schema says is
/// `corrupt` (a damaged or tampered row), never a silent conversion.
struct StoreRow {
    let values: [StoreValue]

    private func value(_ column: Int) throws(NodeStoreError) -> StoreValue {
        guard values.indices.contains(column) else { throw .corrupt(reason: "missing column \(column)") }
        return values[column]
    }

    func integer(_ column: Int) throws(NodeStoreError) -> Int64 {
        guard case .integer(let number) = try value(column) else { throw mismatch(column) }
        return number
    }

    func blob(_ column: Int) throws(NodeStoreError) -> [UInt8] {
        guard case .blob(let bytes) = try value(column) else { throw mismatch(column) }
        return bytes
    }

    func text(_ column: Int) throws(NodeStoreError) -> String {
        guard case .text(let string) = try value(column) else { throw mismatch(column) }
        return string
    }

    func isNull(_ column: Int) -> Bool { (try? value(column)) == .null }

    private func mismatch(_ column: Int) -> NodeStoreError {
        .corrupt(reason: "column \(column) has an unexpected type")
    }
}

/// A connection inside a transaction (or a read). SQL uses `?` placeholders on both engines.
protocol StoreSQL: AnyObject {
    var dialect: StoreDialect { get }
    /// Runs a statement; returns the number of rows it changed.
    @discardableResult
    func run(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> Int
    /// Runs a statement returning rows (SELECT, or DML with RETURNING).
    func query(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> [StoreRow]
    /// Runs a parameterless script (schema migrations).
    func execute(_ script: String) throws(NodeStoreError)
    /// Takes a lock held until the transaction ends (see `StoreLockScope`).
    func lock(_ scope: StoreLockScope) throws(NodeStoreError)
}

extension StoreSQL {
    /// The first row, if any.
    func first(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> StoreRow? {
        try query(sql, parameters).first
    }
}

/// Where the node store keeps its state: one engine, one or more connections.
protocol StoreDatabase: Sendable {
    var dialect: StoreDialect { get }
    /// Runs `body` in one transaction: commits when it returns, rolls back when it throws. With
    /// `retryable`, a transaction that failed with a serialization failure or deadlock is run again
    /// (a bounded number of times); bodies passed as retryable must be safe to run more than once.
    func transaction<T>(retryable: Bool, _ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T
    /// Runs reads outside an explicit transaction (each statement sees committed data).
    func read<T>(_ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T
}
