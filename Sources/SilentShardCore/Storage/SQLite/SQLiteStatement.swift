internal import CSQLite

/// A compiled statement. Column accessors are strict: a value of another storage class than asked for
/// is a `typeMismatch` error (a damaged or tampered row), never a silent conversion.
package final class SQLiteStatement {
    private let handle: OpaquePointer
    private let connection: SQLiteConnection
    /// False for a statement of the connection's cache: this wrapper resets it instead of finalizing it.
    private let owned: Bool

    init(_ handle: OpaquePointer, connection: SQLiteConnection, owned: Bool = true) {
        self.handle = handle
        self.connection = connection
        self.owned = owned
    }

    deinit {
        if owned {
            sqlite3_finalize(handle)
        } else {
            sqlite3_reset(handle)
            sqlite3_clear_bindings(handle)
            connection.returnCached(handle)
        }
    }

    /// Binds parameters 1…n in order (bytes are copied: `SQLITE_TRANSIENT`).
    package func bind(_ values: [SQLiteValue]) throws(SQLiteError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .integer(let number):
                rc = sqlite3_bind_int64(handle, index, number)
            case .blob(let bytes):
                // A zero-length blob still binds as a blob (not NULL) through sqlite3_bind_zeroblob.
                rc = bytes.isEmpty
                    ? sqlite3_bind_zeroblob(handle, index, 0)
                    : bytes.withUnsafeBytes {
                        sqlite3_bind_blob(handle, index, $0.baseAddress, Int32($0.count), csqlite_transient())
                    }
            case .text(let string):
                rc = sqlite3_bind_text(handle, index, string, -1, csqlite_transient())
            case .null:
                rc = sqlite3_bind_null(handle, index)
            }
            guard rc == SQLITE_OK else { throw connection.lastError(rc) }
        }
    }

    /// Advances; true when a row is available, false when done.
    package func step() throws(SQLiteError) -> Bool {
        let rc = sqlite3_step(handle)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.lastError(rc)
        }
    }

    /// Resets so the statement can run again with new bindings.
    package func reset() {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
    }

    /// Number of columns in the result.
    package var columnCount: Int32 { sqlite3_column_count(handle) }

    /// The storage class of a column in the current row (`SQLITE_INTEGER`, `SQLITE_BLOB`, …).
    package func columnType(_ column: Int32) -> Int32 { sqlite3_column_type(handle, column) }

    /// True when the column is SQL NULL.
    package func isNull(_ column: Int32) -> Bool {
        sqlite3_column_type(handle, column) == SQLITE_NULL
    }

    /// An INTEGER column.
    package func integer(_ column: Int32) throws(SQLiteError) -> Int64 {
        guard sqlite3_column_type(handle, column) == SQLITE_INTEGER else { throw mismatch(column) }
        return sqlite3_column_int64(handle, column)
    }

    /// A BLOB column.
    package func blob(_ column: Int32) throws(SQLiteError) -> [UInt8] {
        guard sqlite3_column_type(handle, column) == SQLITE_BLOB else { throw mismatch(column) }
        let count = Int(sqlite3_column_bytes(handle, column))
        guard count > 0, let base = sqlite3_column_blob(handle, column) else { return [] }
        return Array(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// A TEXT column.
    package func text(_ column: Int32) throws(SQLiteError) -> String {
        guard sqlite3_column_type(handle, column) == SQLITE_TEXT,
              let base = sqlite3_column_text(handle, column)
        else { throw mismatch(column) }
        return String(cString: base)
    }

    private func mismatch(_ column: Int32) -> SQLiteError {
        SQLiteError(code: SQLiteError.typeMismatch, message: "column \(column) has an unexpected type")
    }
}
