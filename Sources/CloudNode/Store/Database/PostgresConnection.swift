internal import CPostgres
import Foundation

/// A failure reported by PostgreSQL or libpq: the five-character SQLSTATE and the server's primary
/// message. Parameters are always sent out of line (binary), and detail/hint fields (which can quote
/// row values) are never read; for data exceptions (SQLSTATE class 22), whose primary message may quote
/// an input value, the message is replaced by a generic one. So errors never carry parameter values.
struct PostgresError: Error, Sendable, Equatable {
    /// SQLSTATE, e.g. `23505` (unique violation), `40001` (serialization failure), `40P01` (deadlock),
    /// `08006` (connection failure). Connection-level failures without a server code use `08000`.
    let sqlState: String
    let message: String

    static let uniqueViolation = "23505"
    static let serializationFailure = "40001"
    static let deadlockDetected = "40P01"

    /// True for the failures a transaction may be retried after (serialization failure, deadlock).
    var isRetryable: Bool { sqlState == Self.serializationFailure || sqlState == Self.deadlockDetected }
}

/// One libpq connection. Not thread-safe: `PostgresStoreDatabase` serializes its use under a lock.
/// Every statement goes through `PQexecParams` with binary parameters and binary results, so values
/// never pass through SQL text.
final class PostgresConnection {
    private var handle: OpaquePointer

    /// Connects with a libpq connection string or `postgres://` / `postgresql://` URL.
    /// A string libpq cannot parse is refused without libpq's message (which may quote part of it,
    /// the password included); connection failures carry libpq's message with the password removed.
    init(conninfo: String) throws(PostgresError) {
        var parseError: UnsafeMutablePointer<CChar>?
        guard let parsed = PQconninfoParse(conninfo, &parseError) else {
            if let parseError { PQfreemem(parseError) }
            throw PostgresError(sqlState: "08001", message: "invalid connection string")
        }
        PQconninfoFree(parsed)
        guard let connection = PQconnectdb(conninfo) else {
            throw PostgresError(sqlState: "08000", message: "out of memory")
        }
        guard PQstatus(connection) == CONNECTION_OK else {
            let message = PostgresURL.scrub(Self.text(PQerrorMessage(connection)), conninfo: conninfo)
            PQfinish(connection)
            throw PostgresError(sqlState: "08001", message: "cannot connect: \(message)")
        }
        handle = connection
    }

    deinit { PQfinish(handle) }

    /// False once the server connection is lost (the owner reconnects with `reset`).
    var isConnected: Bool { PQstatus(handle) == CONNECTION_OK }

    /// Re-establishes a lost connection with the same parameters.
    func reset() throws(PostgresError) {
        PQreset(handle)
        guard PQstatus(handle) == CONNECTION_OK else {
            throw PostgresError(sqlState: "08001", message: "cannot reconnect: \(Self.text(PQerrorMessage(handle)))")
        }
    }

    /// Runs one or more statements without parameters (schema scripts, BEGIN/COMMIT).
    func execute(_ sql: String) throws(PostgresError) {
        let result = PQexec(handle, sql)
        defer { PQclear(result) }
        try check(result)
    }

    /// Runs one statement with `$1…$n` parameters; returns the rows (empty for commands) and the
    /// number of rows the command affected.
    @discardableResult
    func query(_ sql: String, _ parameters: [StoreValue]) throws(PostgresError) -> (rows: [[StoreValue]], affected: Int) {
        var types: [Oid] = []
        var lengths: [Int32] = []
        var formats: [Int32] = []
        var offsets: [Int?] = []
        var storage: [UInt8] = []
        for parameter in parameters {
            formats.append(1)
            switch parameter {
            case .integer(let number):
                types.append(20)  // int8
                offsets.append(storage.count)
                withUnsafeBytes(of: number.bigEndian) { storage.append(contentsOf: $0) }
                lengths.append(8)
            case .blob(let bytes):
                types.append(17)  // bytea
                offsets.append(storage.count)
                storage.append(contentsOf: bytes)
                lengths.append(Int32(clamping: bytes.count))
            case .text(let string):
                types.append(25)  // text
                offsets.append(storage.count)
                let utf8 = Array(string.utf8)
                storage.append(contentsOf: utf8)
                lengths.append(Int32(clamping: utf8.count))
            case .null:
                types.append(0)
                offsets.append(nil)
                lengths.append(0)
            }
        }
        storage.append(0)  // a valid address for zero-length values
        let result: OpaquePointer? = storage.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!)  // non-empty: one byte appended above
            let values: [UnsafePointer<CChar>?] = offsets.map { offset in
                offset.map { (base + $0).assumingMemoryBound(to: CChar.self) }
            }
            return PQexecParams(handle, sql, Int32(parameters.count), types, values, lengths, formats, 1)
        }
        defer { PQclear(result) }
        try check(result)
        guard let result else { return ([], 0) }
        let affected = Int(Self.text(PQcmdTuples(result))) ?? 0
        guard PQresultStatus(result) == PGRES_TUPLES_OK else { return ([], affected) }
        let rowCount = PQntuples(result)
        let columnCount = PQnfields(result)
        var rows: [[StoreValue]] = []
        rows.reserveCapacity(Int(rowCount))
        for row in 0..<rowCount {
            var values: [StoreValue] = []
            values.reserveCapacity(Int(columnCount))
            for column in 0..<columnCount {
                values.append(try Self.value(result, row, column))
            }
            rows.append(values)
        }
        return (rows, affected)
    }

    private func check(_ result: OpaquePointer?) throws(PostgresError) {
        guard let result else {
            throw PostgresError(sqlState: "08006", message: Self.text(PQerrorMessage(handle)))
        }
        switch PQresultStatus(result) {
        case PGRES_COMMAND_OK, PGRES_TUPLES_OK, PGRES_EMPTY_QUERY: return
        default:
            let state = PQresultErrorField(result, Int32(UInt8(ascii: "C"))).map { String(cString: $0) } ?? "08000"
            let message = state.hasPrefix("22")
                ? "data exception"
                : (PQresultErrorField(result, Int32(UInt8(ascii: "M"))).map { String(cString: $0) }
                    ?? Self.text(PQerrorMessage(handle)))
            throw PostgresError(sqlState: state, message: message)
        }
    }

    /// Decodes one binary-format column by its type: int2/int4/int8 → integer, bytea → blob,
    /// text/varchar/name → text, bool → integer 0/1, void → null. Any other type or a malformed length is an error (`XX001`).
    private static func value(_ result: OpaquePointer, _ row: Int32, _ column: Int32) throws(PostgresError) -> StoreValue {
        if PQgetisnull(result, row, column) != 0 { return .null }
        let length = Int(PQgetlength(result, row, column))
        guard length >= 0, let pointer = PQgetvalue(result, row, column) else {
            throw PostgresError(sqlState: "XX001", message: "unreadable column \(column)")
        }
        let bytes = UnsafeRawBufferPointer(start: pointer, count: length)
        switch PQftype(result, column) {
        case 20, 23, 21:
            guard length == 8 || length == 4 || length == 2 else {
                throw PostgresError(sqlState: "XX001", message: "integer column \(column) has \(length) bytes")
            }
            var number: Int64 = 0
            for byte in bytes { number = number << 8 | Int64(byte) }
            let shift = 64 - 8 * length  // sign-extend int2/int4
            return .integer(shift == 0 ? number : (number << shift) >> shift)
        case 17:
            return .blob(Array(bytes))
        case 25, 1043, 19:
            return .text(String(decoding: bytes, as: UTF8.self))
        case 16:  // bool
            guard length == 1 else { throw PostgresError(sqlState: "XX001", message: "bool column \(column) has \(length) bytes") }
            return .integer(bytes[0] == 0 ? 0 : 1)
        case 2278:  // void (e.g. pg_advisory_xact_lock)
            return .null
        default:
            throw PostgresError(sqlState: "XX001", message: "column \(column) has unsupported type \(PQftype(result, column))")
        }
    }

    private static func text(_ pointer: UnsafePointer<CChar>?) -> String {
        guard let pointer else { return "" }
        return String(cString: pointer).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
