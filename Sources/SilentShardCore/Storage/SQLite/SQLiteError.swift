internal import CSQLite

/// A failure reported by SQLite, or a row whose column types are not what the schema says.
///
/// Messages come from `sqlite3_errmsg`, which never includes bound values, so they carry no secrets.
/// Shared by the app's SQLite store and the cloud node's store (package access).
package struct SQLiteError: Error, Sendable, Equatable {
    /// SQLite's primary result code, or `SQLiteError.typeMismatch` for a malformed row.
    package let code: Int32
    package let message: String

    /// Code used when a column holds a value of the wrong storage class (a corrupt or tampered row).
    package static let typeMismatch: Int32 = -1

    package init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// True when another connection holds the lock past the busy timeout.
    package var isBusy: Bool { code & 0xFF == SQLITE_BUSY || code & 0xFF == SQLITE_LOCKED }

    /// True when the file is not a database or the database image is damaged.
    package var isCorruption: Bool {
        code == Self.typeMismatch || code & 0xFF == SQLITE_CORRUPT || code & 0xFF == SQLITE_NOTADB
    }
}
