import CSQLite
import Foundation
import MPCCrypto
import SilentShardTestSupport
import Testing
@testable import SilentShardCore

@Suite("SQLiteStorageClient: persistence, permissions, corrupt rows")
struct SQLiteStorageClientTests {
    @Test("records persist across reopening; the database file is 0600")
    func persistence() async throws {
        let path = scratchDirectory() + "/records.sqlite"
        let record = KeyshareRecord(keyId: keyA, staged: share(1), current: share(2, kind: .eddsa))
        try await SQLiteStorageClient(path: path).write(record)
        #expect(try await SQLiteStorageClient(path: path).read(keyId: keyA) == record)
        #expect(mode(of: path) == 0o600)
    }

    /// Security review 2, finding 14: on Apple platforms `synchronous = FULL` alone calls `fsync`, which leaves a
    /// commit in the drive's cache; `fullfsync` makes SQLite use `F_FULLFSYNC` (commits and checkpoints).
    @Test func finding14_durabilityPragmasIncludeFullFsync() throws {
        let store = try SQLiteStorageClient(path: scratchDirectory() + "/records.sqlite")
        #expect(try store.durabilitySettings() == ["synchronous": 2, "fullfsync": 1, "checkpoint_fullfsync": 1])
    }

    @Test("damaged rows are typed errors: flipped bytes, wrong column type, swapped row")
    func corruptRows() async throws {
        let path = scratchDirectory() + "/records.sqlite"
        let store = try SQLiteStorageClient(path: path)
        try await store.write(KeyshareRecord(keyId: keyA, current: share(1)))
        try await store.write(KeyshareRecord(keyId: keyB, current: share(2)))
        let raw = try SQLiteConnection(path: path)

        // Swap: key B's row gets key A's record.
        try raw.run("UPDATE keyshare_records SET record = (SELECT record FROM keyshare_records WHERE key_id = ?) WHERE key_id = ?",
                    [.text(keyA), .text(keyB)])
        #expect(await storageError { _ = try await store.read(keyId: keyB) } == .keyIdMismatch(keyId: keyB))

        // A flipped byte.
        try raw.run("UPDATE keyshare_records SET record = ? WHERE key_id = ?", [.blob([UInt8](repeating: 7, count: 80)), .text(keyA)])
        guard case .corruptRecord = await storageError({ _ = try await store.read(keyId: keyA) }) else {
            Issue.record("flipped row not detected")
            return
        }
        // A TEXT value where a BLOB belongs.
        try raw.run("UPDATE keyshare_records SET record = 'hello' WHERE key_id = ?", [.text(keyA)])
        guard case .corruptRecord = await storageError({ _ = try await store.read(keyId: keyA) }) else {
            Issue.record("wrong column type not detected")
            return
        }
    }

    @Test("a file that is not a database is a typed error")
    func notADatabase() throws {
        let path = scratchDirectory() + "/garbage.sqlite"
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: path))
        #expect(throws: StorageError.self) { _ = try SQLiteStorageClient(path: path) }
    }

    /// A fresh file is switched to WAL by whichever connection gets there first; SQLite does not wait
    /// (busy handler) for the others' lock upgrade, so with a plain `PRAGMA journal_mode = WAL` about one
    /// round in six failed here with "database is locked" (CI saw it as a node store failing to open).
    @Test("eight connections switching one new file to WAL at once all succeed (30 rounds)")
    func concurrentSwitchToWAL() async throws {
        for round in 0..<30 {
            let path = scratchDirectory() + "/racing-\(round).sqlite"
            nonisolated(unsafe) let connections = try (0..<8).map { _ in try SQLiteConnection(path: path) }
            let failures = LockedValue<[String]>([])
            await onThreads(connections.count) { index in
                do { try connections[index].enableWriteAheadLog() } catch { failures.withLock { $0.append("\(error)") } }
            }
            #expect(failures.withLock { $0 }.isEmpty, "round \(round): \(failures.withLock { $0 })")
            let statement = try SQLiteConnection(path: path).prepare("PRAGMA journal_mode")
            #expect(try statement.step())
            #expect(try statement.text(0) == "wal")
        }
    }
}
