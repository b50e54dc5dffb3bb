import Foundation

/// A connection usable from any thread: every use runs under one lock, so SQLite sees one caller at a
/// time. (`LockedValue` would do, but its `sending` rules reject generic results built from the connection.)
package final class LockedSQLiteConnection: @unchecked Sendable {
    private let lock = NSLock()
    private let connection: SQLiteConnection

    package init(_ connection: SQLiteConnection) { self.connection = connection }

    /// Runs `body` with exclusive use of the connection.
    package func withConnection<T, E: Error>(_ body: (SQLiteConnection) throws(E) -> T) throws(E) -> T {
        lock.lock()
        defer { lock.unlock() }
        return try body(connection)
    }
}
