/// Every failure of the app-side storage layer (`StorageClient` built-ins, backups).
///
/// Cases name the key id (public: the hex of a public-key hash) and what went wrong; they never carry
/// keyshare bytes, passwords or derived keys, and neither do their descriptions.
public enum StorageError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The key id is not a hex string or a reserved `~ss/presig/<hex>` / `~ss/ban/<hex>` / `~ss/backup/<hex>` id
    /// (this rejects path separators, `..`, empty and over-long ids).
    case invalidKeyId
    /// `promote(keyId:)` found no record, or a record without a staged share.
    case nothingStaged(keyId: String)
    /// A record was asked to hold neither a staged nor a current share; delete it instead.
    case emptyRecord(keyId: String)
    /// Stored bytes failed strict decoding or their integrity check (file, row, or backup header).
    case corruptRecord(keyId: String, reason: String)
    /// A stored record names another key id than the one it is stored under (a swapped file or row).
    case keyIdMismatch(keyId: String)
    /// A keyshare or record is larger than the format allows.
    case recordTooLarge(byteCount: Int)
    /// A file-system call failed (`errno` and the call's name; no paths with secrets exist).
    case io(operation: String, errno: Int32)
    /// SQLite reported an error (its result code and message; messages never include bound values).
    case database(code: Int32, message: String)
    /// A backup blob does not start with the backup magic, or its version or parameters are unsupported.
    case unsupportedBackup(reason: String)
    /// The backup password is wrong (or the blob's salt, parameters or check value were altered).
    case incorrectPassword
    /// The password is right but the ciphertext or header did not authenticate: the blob was altered.
    case backupTampered
    /// Password hashing could not run (usually: not enough memory for the chosen limits).
    case keyDerivationFailed
    /// A `StorageKeyProvider` returned a key that is not 32 bytes (the key itself is never shown).
    case invalidStorageKey
    /// An encrypted record was sealed under another storage key than the provider's (the key was
    /// replaced or lost, or the record comes from another install). Nothing was changed.
    case wrongStorageKey(keyId: String)
    /// An encrypted record did not authenticate under the right key: it was altered, moved from another
    /// key id, or its staged and current shares were swapped. Nothing was changed.
    case recordNotAuthentic(keyId: String)
    /// An encrypted record uses a format version this SDK does not read.
    case unsupportedRecordVersion(keyId: String, version: UInt8)
    /// A Keychain call failed (the call's name and its `OSStatus`).
    case keychain(operation: String, status: Int32)

    public var description: String {
        switch self {
        case .invalidKeyId: "invalid key id"
        case .nothingStaged(let keyId): "no staged keyshare to promote for key \(keyId)"
        case .emptyRecord(let keyId): "record for key \(keyId) holds no keyshare"
        case .corruptRecord(let keyId, let reason): "stored record for key \(keyId) is corrupt: \(reason)"
        case .keyIdMismatch(let keyId): "stored record under key \(keyId) belongs to another key"
        case .recordTooLarge(let count): "record too large (\(count) bytes)"
        case .io(let operation, let errno): "\(operation) failed (errno \(errno))"
        case .database(let code, let message): "database error \(code): \(message)"
        case .unsupportedBackup(let reason): "unsupported backup: \(reason)"
        case .incorrectPassword: "incorrect backup password"
        case .backupTampered: "backup failed authentication (altered)"
        case .keyDerivationFailed: "password hashing failed (out of memory?)"
        case .invalidStorageKey: "the storage key provider returned a key that is not 32 bytes"
        case .wrongStorageKey(let keyId): "record for key \(keyId) was encrypted under another storage key"
        case .recordNotAuthentic(let keyId): "encrypted record for key \(keyId) failed authentication (altered or moved)"
        case .unsupportedRecordVersion(let keyId, let version):
            "encrypted record for key \(keyId) has unsupported format version \(version)"
        case .keychain(let operation, let status): "\(operation) failed (OSStatus \(status))"
        }
    }
}

extension StorageError {
    /// Maps a SQLite failure; damaged rows and non-database files become `corruptRecord`.
    init(_ error: SQLiteError, keyId: String = "") {
        self = error.isCorruption
            ? .corruptRecord(keyId: keyId, reason: "database: \(error.message)")
            : .database(code: error.code, message: error.message)
    }
}
