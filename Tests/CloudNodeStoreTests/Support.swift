import CSQLite
import Foundation
import Testing
@testable import CloudNode
import SilentShardCore

let keyA = String(repeating: "1a", count: 32)
let keyB = String(repeating: "2b", count: 32)
let device = [UInt8](repeating: 0xD1, count: 32)

func scratchPath(_ name: String = "node.sqlite") -> String {
    let directory = NSTemporaryDirectory() + "silentshard-node-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    return directory + "/" + name
}

func bytes32(_ byte: UInt8) -> [UInt8] { [UInt8](repeating: byte, count: 32) }

/// A recognizable "secret" that must never appear on disk or in the audit log.
func secretShare(_ seed: UInt8, count: Int = 512) -> [UInt8] {
    (0..<count).map { UInt8(truncatingIfNeeded: Int(seed) &* 131 &+ $0 &* 7 &+ 0x5A) }
}

func keyshare(gen: UInt8, seed: UInt8, digest: UInt8? = nil) -> NodeKeyshare {
    NodeKeyshare(gen: bytes32(gen), kind: .ecdsa, bytes: secretShare(seed), digest: digest.map(bytes32))
}

/// Every byte of the database file and its WAL.
func rawDatabaseBytes(_ path: String) -> [UInt8] {
    ["", "-wal", "-shm"].flatMap { suffix in
        (try? [UInt8](Data(contentsOf: URL(fileURLWithPath: path + suffix)))) ?? []
    }
}

extension Array where Element == UInt8 {
    /// True when `needle` occurs as a contiguous run.
    func contains(run needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, needle.count <= count else { return false }
        for start in 0...(count - needle.count) where self[start] == needle[0] {
            if Array(self[start..<(start + needle.count)]) == needle { return true }
        }
        return false
    }
}

/// Runs `body` and returns the thrown `NodeStoreError`, or nil.
func nodeError<T>(_ body: () throws -> T) -> NodeStoreError? {
    do {
        _ = try body()
        return nil
    } catch let error as NodeStoreError {
        return error
    } catch {
        return nil
    }
}

/// A store with key A committed at gen 1 (seed 1).
func storeWithCommittedKey(path: String = scratchPath(), masterKey: NodeMasterKey = .random(),
                           clock: @escaping @Sendable () -> Date = { Date() }) throws -> NodeShareStore {
    let store = try NodeShareStore(path: path, masterKey: masterKey, clock: clock)
    try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD0), party: "node 1")
    try store.commit(keyId: keyA, gen: bytes32(1), digest: bytes32(0xD0), party: "app", owner: "test-owner")
    return store
}

// MARK: Backends

/// The engines every store suite runs on. PostgreSQL needs `SILENTSHARD_TEST_POSTGRES_URL` (a server
/// where the tests may create schemas; `scripts/test` starts one with `scripts/postgres`); without it
/// the PostgreSQL cases are cancelled with that reason.
enum StoreBackend: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite
    case postgres

    var description: String { rawValue }
}

let postgresTestURL: String? = {
    let value = ProcessInfo.processInfo.environment["SILENTSHARD_TEST_POSTGRES_URL"] ?? ""
    return value.isEmpty ? nil : value
}()

let postgresSkipReason = "SILENTSHARD_TEST_POSTGRES_URL is unset: PostgreSQL case skipped (scripts/test starts a server)"

/// A fresh, empty database: a new SQLite file, or a new schema on the test PostgreSQL server (the
/// URL selects it with `search_path`), so every test is isolated.
func scratchLocation(_ backend: StoreBackend) throws -> NodeStoreLocation {
    switch backend {
    case .sqlite:
        return .sqlite(path: scratchPath())
    case .postgres:
        guard let url = postgresTestURL else { try Test.cancel(Comment(rawValue: postgresSkipReason)) }
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
        try PostgresConnection(conninfo: url).execute("CREATE SCHEMA \(schema)")
        // application_name lets a test find its own connections (pg_stat_activity).
        return .postgres(url: url + (url.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)&application_name=\(schema)")
    }
}

/// Runs raw SQL against the database behind `location` (tests that tamper with rows). `sqlite` and
/// `postgres` are the statement in each dialect.
func rawExecute(_ location: NodeStoreLocation, sqlite: String, postgres: String) throws {
    switch location {
    case .sqlite(let path): try SQLiteConnection(path: path).execute(sqlite)
    case .postgres(let url): try PostgresConnection(conninfo: url).execute(postgres)
    }
}

/// A store with key A committed at gen 1 (seed 1).
func storeWithCommittedKey(_ location: NodeStoreLocation, masterKey: NodeMasterKey = .random(),
                           presignatureLimit: Int = 100,
                           clock: @escaping @Sendable () -> Date = { Date() }) throws -> NodeShareStore {
    let store = try NodeShareStore(location: location, masterKey: masterKey, presignatureLimit: presignatureLimit, clock: clock)
    try store.prepare(keyId: keyA, share: keyshare(gen: 1, seed: 1, digest: 0xD0), party: "node 1")
    try store.commit(keyId: keyA, gen: bytes32(1), digest: bytes32(0xD0), party: "app", owner: "test-owner")
    return store
}

