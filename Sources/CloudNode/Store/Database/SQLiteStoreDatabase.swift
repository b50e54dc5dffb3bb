internal import CSQLite
import Foundation
import SilentShardCore

/// The node store on SQLite: one connection under a lock; every transaction is `BEGIN IMMEDIATE`, so
/// writers across threads and processes serialize on SQLite's database lock (locks by scope are no-ops).
final class SQLiteStoreDatabase: StoreDatabase, Sendable {
    private let connection: LockedSQLiteConnection
    var dialect: StoreDialect { .sqlite }

    init(_ connection: SQLiteConnection) { self.connection = LockedSQLiteConnection(connection) }

    func transaction<T>(retryable: Bool, _ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        try connection.withConnection { db throws(NodeStoreError) -> T in
            let session = SQLiteStoreSQL(db)
            do throws(SQLiteTransactionError<NodeStoreError>) {
                return try db.transaction { () throws(NodeStoreError) -> T in try body(session) }
            } catch {
                throw NodeStoreError(error)
            }
        }
    }

    func read<T>(_ body: (any StoreSQL) throws(NodeStoreError) -> T) throws(NodeStoreError) -> T {
        try connection.withConnection { db throws(NodeStoreError) -> T in try body(SQLiteStoreSQL(db)) }
    }
}

private final class SQLiteStoreSQL: StoreSQL {
    let db: SQLiteConnection
    var dialect: StoreDialect { .sqlite }

    init(_ db: SQLiteConnection) { self.db = db }

    func run(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> Int {
        try CloudNode.sql { () throws(SQLiteError) -> Int in try db.run(sql, parameters.map(Self.bound)) }
    }

    func query(_ sql: String, _ parameters: [StoreValue]) throws(NodeStoreError) -> [StoreRow] {
        try CloudNode.sql { () throws(SQLiteError) -> [StoreRow] in
            let statement = try db.cachedStatement(sql)
            try statement.bind(parameters.map(Self.bound))
            var rows: [StoreRow] = []
            while try statement.step() {
                rows.append(StoreRow(values: (0..<statement.columnCount).map { column in
                    switch statement.columnType(column) {
                    case SQLITE_INTEGER: .integer((try? statement.integer(column)) ?? 0)
                    case SQLITE_BLOB: .blob((try? statement.blob(column)) ?? [])
                    case SQLITE_TEXT: .text((try? statement.text(column)) ?? "")
                    case SQLITE_NULL: .null
                    default: .null  // REAL: no column of the schema holds one; reads as a type mismatch
                    }
                }))
            }
            return rows
        }
    }

    func execute(_ script: String) throws(NodeStoreError) {
        try CloudNode.sql { () throws(SQLiteError) in try db.execute(script) }
    }

    func lock(_ scope: StoreLockScope) throws(NodeStoreError) {}

    private static func bound(_ value: StoreValue) -> SQLiteValue {
        switch value {
        case .integer(let number): .integer(number)
        case .blob(let bytes): .blob(bytes)
        case .text(let string): .text(string)
        case .null: .null
        }
    }
}
