import Foundation
import Testing
@testable import SilentShardCore

@Suite("FileStorageClient: atomicity, permissions, corruption")
struct FileStorageClientTests {
    @Test("directory is 0700 and record files are 0600")
    func permissions() async throws {
        let directory = scratchDirectory() + "/records"
        let store = try FileStorageClient(directory: directory)
        try await store.write(KeyshareRecord(keyId: keyA, current: share(1)))
        #expect(mode(of: directory) == 0o700)
        #expect(mode(of: store.path(for: keyA)) == 0o600)

        // An existing, too-open directory is tightened.
        chmod(directory, 0o755)
        _ = try FileStorageClient(directory: directory)
        #expect(mode(of: directory) == 0o700)
    }

    @Test("a write failing at any step before the rename leaves the old file intact and no temporary file")
    func failedWriteKeepsOldRecord() async throws {
        for step in [FileWriteStep.afterWrite, .beforeRename] {
            let directory = scratchDirectory() + "/records"
            let old = KeyshareRecord(keyId: keyA, current: share(1))
            try await FileStorageClient(directory: directory).write(old)
            let failing = try FileStorageClient(directory: directory) { current throws(StorageError) in
                if current == step { throw .io(operation: "injected", errno: EIO) }
            }
            let error = await storageError {
                try await failing.write(KeyshareRecord(keyId: keyA, staged: share(2), current: share(1)))
            }
            #expect(error == .io(operation: "injected", errno: EIO))
            #expect(try await FileStorageClient(directory: directory).read(keyId: keyA) == old)
            let names = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(names == [KeyId.fileStem(keyA) + ".keyshare"], "\(step): \(names)")
        }
    }

    @Test("a failure after the rename means the new record is in place")
    func failureAfterRename() async throws {
        let directory = scratchDirectory() + "/records"
        let failing = try FileStorageClient(directory: directory) { step throws(StorageError) in
            if step == .afterRename { throw .io(operation: "injected", errno: EIO) }
        }
        let record = KeyshareRecord(keyId: keyA, staged: share(2))
        #expect(await storageError { try await failing.write(record) } != nil)
        #expect(try await FileStorageClient(directory: directory).read(keyId: keyA) == record)
    }

    @Test("temporary files left by a crash are removed when the store opens")
    func leftoverTemporaryFiles() throws {
        let directory = scratchDirectory() + "/records"
        _ = try FileStorageClient(directory: directory)
        let leftover = directory + "/." + keyA + ".tmp-0011223344556677"
        _ = FileManager.default.createFile(atPath: leftover, contents: Data([1, 2, 3]))
        _ = try FileStorageClient(directory: directory)
        #expect(!FileManager.default.fileExists(atPath: leftover))
    }

    @Test("flipped, truncated, extended, empty or foreign files are typed errors, never traps")
    func corruptFiles() async throws {
        let directory = scratchDirectory() + "/records"
        let store = try FileStorageClient(directory: directory)
        try await store.write(KeyshareRecord(keyId: keyA, staged: share(1), current: share(2)))
        let path = store.path(for: keyA)
        let good = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))

        var variants: [[UInt8]] = [[], Array(good.prefix(10)), Array(good.dropLast()), good + [0]]
        for index in stride(from: 0, to: good.count, by: 37) {
            var flipped = good
            flipped[index] ^= 0x40
            variants.append(flipped)
        }
        variants.append(Array(repeating: 0xFF, count: 4096))
        for bytes in variants {
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            let error = await storageError { _ = try await store.read(keyId: keyA) }
            guard case .corruptRecord(let keyId, _) = error else {
                Issue.record("expected corruptRecord, got \(String(describing: error))")
                continue
            }
            #expect(keyId == keyA)
        }
    }

    @Test("a record file copied under another key id is detected")
    func swappedFile() async throws {
        let store = try FileStorageClient(directory: scratchDirectory() + "/records")
        try await store.write(KeyshareRecord(keyId: keyA, current: share(1)))
        try FileManager.default.copyItem(atPath: store.path(for: keyA), toPath: store.path(for: keyB))
        #expect(await storageError { _ = try await store.read(keyId: keyB) } == .keyIdMismatch(keyId: keyB))
    }

    @Test("a symbolic link in place of a record is refused")
    func symlink() async throws {
        let directory = scratchDirectory()
        let store = try FileStorageClient(directory: directory + "/records")
        _ = FileManager.default.createFile(atPath: directory + "/elsewhere", contents: Data([1]))
        try FileManager.default.createSymbolicLink(atPath: store.path(for: keyA), withDestinationPath: directory + "/elsewhere")
        let error = await storageError { _ = try await store.read(keyId: keyA) }
        guard case .corruptRecord = error else {
            Issue.record("expected corruptRecord, got \(String(describing: error))")
            return
        }
    }
}
