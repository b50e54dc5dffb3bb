import Foundation
@testable import SilentShardCore

/// A fresh private scratch directory under the system temporary directory.
func scratchDirectory(_ name: String = #function) -> String {
    let base = NSTemporaryDirectory() + "silentshard-storage-tests-" + UUID().uuidString
    try? FileManager.default.createDirectory(atPath: base, withIntermediateDirectories: true)
    return base
}

let keyA = String(repeating: "ab", count: 32)
let keyB = String(repeating: "cd", count: 32)

func share(_ byte: UInt8, count: Int = 300, kind: StoredShareKind = .ecdsa) -> StoredShare {
    StoredShare(kind: kind, bytes: [UInt8](repeating: byte, count: count))
}

/// POSIX permission bits of a path.
func mode(of path: String) -> Int {
    let attributes = try? FileManager.default.attributesOfItem(atPath: path)
    return (attributes?[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

/// The three built-in stores, each over fresh storage.
func builtInStores() throws -> [(name: String, store: any StorageClient)] {
    let directory = scratchDirectory()
    return [
        ("memory", InMemoryStorageClient()),
        ("file", try FileStorageClient(directory: directory + "/records")),
        ("sqlite", try SQLiteStorageClient(path: directory + "/records.sqlite")),
    ]
}

/// Runs `body` and returns the thrown `StorageError`, or nil.
func storageError(_ body: () async throws -> Void) async -> StorageError? {
    do {
        try await body()
        return nil
    } catch let error as StorageError {
        return error
    } catch {
        return nil
    }
}
