import Foundation
import MPCCrypto
#if canImport(Darwin)
import Darwin
#else
import Glibc
#endif

/// One file per key id in a private directory (mode 0700; files 0600).
///
/// A write goes to a fresh temporary file in the same directory (`O_EXCL`, `O_NOFOLLOW`), which is
/// fsynced (`F_FULLFSYNC` on Apple platforms), renamed over the record's file, and then the directory
/// is fsynced: after a crash the file holds either the old record or the new one, never a mix. Records
/// use `KeyshareRecordCodec` (versioned, SHA-256 checked, bound to their key id). File names come from
/// validated key ids only (`KeyId`), so no key id can escape the directory.
///
/// Records are integrity-checked, not encrypted: this initializer keeps shares in the clear. Use
/// `FileStorageClient.encrypted(directory:keyProvider:)` (or `KeychainStorageClient` on Apple) unless the
/// directory is already protected storage (an iOS data protection class, an encrypted home).
public final class FileStorageClient: StorageClient {
    /// The directory holding the records.
    public let directory: String
    /// Test hook: called at each step of a write; throwing simulates a failure (or crash) there.
    let faultInjection: (@Sendable (FileWriteStep) throws(StorageError) -> Void)?

    /// Opens (creating if needed, mode 0700) the record directory; tightens an existing directory's
    /// mode to 0700 and removes temporary files a crash left behind.
    public convenience init(directory: String) throws(StorageError) {
        try self.init(directory: directory, faultInjection: nil)
    }

    init(directory: String,
         faultInjection: (@Sendable (FileWriteStep) throws(StorageError) -> Void)?) throws(StorageError) {
        self.directory = directory
        self.faultInjection = faultInjection
        if mkdir(directory, 0o700) != 0 {
            let error = errno
            guard error == EEXIST else { throw .io(operation: "mkdir", errno: error) }
            var info = stat()
            guard stat(directory, &info) == 0 else { throw .io(operation: "stat", errno: errno) }
            guard info.st_mode & S_IFMT == S_IFDIR else { throw .io(operation: "mkdir", errno: ENOTDIR) }
        }
        guard chmod(directory, 0o700) == 0 else { throw .io(operation: "chmod", errno: errno) }
        removeLeftoverTemporaryFiles()
    }

    public func read(keyId: String) async throws -> KeyshareRecord? {
        let id = try KeyId.canonical(keyId)
        guard let bytes = try readFile(path(for: id), keyId: id) else { return nil }
        return try KeyshareRecordCodec.decode(bytes, expectedKeyId: id)
    }

    public func write(_ record: KeyshareRecord) async throws {
        var record = record
        record.keyId = try KeyId.canonical(record.keyId)
        let bytes = try KeyshareRecordCodec.encode(record)
        try atomicWrite(bytes, to: path(for: record.keyId), stem: KeyId.fileStem(record.keyId))
    }

    public func delete(keyId: String) async throws {
        let id = try KeyId.canonical(keyId)
        if unlink(path(for: id)) != 0 {
            let error = errno
            guard error == ENOENT else { throw StorageError.io(operation: "unlink", errno: error) }
            return
        }
        try syncDirectory()
    }

    /// The path of a record's file (for tests and diagnostics; the key id must be canonical).
    func path(for canonicalKeyId: String) -> String {
        directory + "/" + KeyId.fileStem(canonicalKeyId) + ".keyshare"
    }

    // MARK: Writing

    private func atomicWrite(_ bytes: [UInt8], to target: String, stem: String) throws(StorageError) {
        let suffix = SecureRandom.bytes(count: 8).map { String(format: "%02x", $0) }.joined()
        let temporary = directory + "/." + stem + ".tmp-" + suffix
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw .io(operation: "open", errno: errno) }
        var closed = false
        do throws(StorageError) {
            guard fchmod(fd, 0o600) == 0 else { throw .io(operation: "fchmod", errno: errno) }
            try writeAll(fd, bytes)
            try faultInjection?(.afterWrite)
            try fullSync(fd)
            closed = true
            guard close(fd) == 0 else { throw .io(operation: "close", errno: errno) }
            try faultInjection?(.beforeRename)
            guard rename(temporary, target) == 0 else { throw .io(operation: "rename", errno: errno) }
        } catch {
            if !closed { close(fd) }
            unlink(temporary)
            throw error
        }
        try faultInjection?(.afterRename)
        try syncDirectory()
    }

    private func writeAll(_ fd: Int32, _ bytes: [UInt8]) throws(StorageError) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes.withUnsafeBytes { buffer in
                posixWrite(fd, buffer.baseAddress! + offset, buffer.count - offset)
            }
            if written < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "write", errno: errno)
            }
            offset += written
        }
    }

    private func fullSync(_ fd: Int32) throws(StorageError) {
        #if canImport(Darwin)
        if fcntl(fd, F_FULLFSYNC) == 0 { return }
        #endif
        guard fsync(fd) == 0 else { throw .io(operation: "fsync", errno: errno) }
    }

    private func syncDirectory() throws(StorageError) {
        let fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(operation: "open directory", errno: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw .io(operation: "fsync directory", errno: errno) }
    }

    // MARK: Reading

    private func readFile(_ path: String, keyId: String) throws(StorageError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let error = errno
            if error == ENOENT { return nil }
            if error == ELOOP { throw .corruptRecord(keyId: keyId, reason: "record is a symbolic link") }
            throw .io(operation: "open", errno: error)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .io(operation: "fstat", errno: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .corruptRecord(keyId: keyId, reason: "not a regular file") }
        let size = Int(info.st_size)
        guard size <= KeyshareRecordCodec.maximumRecordBytes else {
            throw .corruptRecord(keyId: keyId, reason: "too large")
        }
        var bytes = [UInt8](repeating: 0, count: size)
        var offset = 0
        while offset < size {
            let count = bytes.withUnsafeMutableBytes { buffer in
                posixRead(fd, buffer.baseAddress! + offset, size - offset)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw .io(operation: "read", errno: errno)
            }
            if count == 0 { break }
            offset += count
        }
        guard offset == size else { throw .corruptRecord(keyId: keyId, reason: "file changed while reading") }
        return bytes
    }

    private func removeLeftoverTemporaryFiles() {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(".") && name.contains(".tmp-") {
            unlink(directory + "/" + name)
        }
    }
}

/// The steps of `FileStorageClient`'s atomic write at which tests inject failures.
enum FileWriteStep: Sendable {
    /// The temporary file is written but not synced.
    case afterWrite
    /// The temporary file is synced and closed, not yet renamed.
    case beforeRename
    /// The rename happened; the directory is not yet synced.
    case afterRename
}

@inline(__always)
private func posixWrite(_ fd: Int32, _ buffer: UnsafeRawPointer, _ count: Int) -> Int {
    write(fd, buffer, count)
}

@inline(__always)
private func posixRead(_ fd: Int32, _ buffer: UnsafeMutableRawPointer, _ count: Int) -> Int {
    read(fd, buffer, count)
}
