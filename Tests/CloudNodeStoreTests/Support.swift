import Foundation
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
    try store.commit(keyId: keyA, gen: bytes32(1), digest: bytes32(0xD0), party: "app")
    return store
}
