import Foundation
import MPCCrypto

/// Password-protected backups of a keyshare (duo has no redundancy: losing the app's share loses the
/// wallet unless it was exported or backed up).
///
/// Blob layout (version 1; integers big-endian):
///
///     "SSBK" ‖ u8 version (1) ‖ u8 kdf (1 = Argon2id v1.3) ‖ u8 aead (1 = XChaCha20-Poly1305)
///     ‖ u32 opsLimit ‖ u32 memLimit in KiB ‖ salt (16) ‖ nonce (24) ‖ check (16)
///     ‖ ciphertext ‖ tag (16)
///
/// Argon2id(password, salt) yields 64 bytes: the first 32 are the XChaCha20-Poly1305 key, the last 32
/// feed the check value `SHA-256("SilentShard/backup/check/v1" ‖ k2)[0..<16]`, which tells a wrong
/// password (`incorrectPassword`) from an altered blob (`backupTampered`); it gives an attacker no
/// shortcut, since every guess still costs one Argon2id evaluation. Everything before the ciphertext
/// is the AEAD's associated data, so no header field can be changed undetected. Salt and nonce are
/// fresh random for every backup. Passwords are NFC-normalized UTF-8, so the same password typed on
/// different keyboards opens the blob.
///
/// Limits: `.moderate` (3 passes, 256 MiB) by default; `.interactive` (2 passes, 64 MiB) for
/// memory-constrained devices (iOS extensions); `.sensitive` (4 passes, 1 GiB) on desktops. `open`
/// refuses blobs asking for more than 1 GiB or 16 passes, so a crafted blob cannot exhaust memory.
public enum KeyshareBackup {
    static let magic: [UInt8] = Array("SSBK".utf8)
    static let version: UInt8 = 1
    static let kdfArgon2id: UInt8 = 1
    static let aeadXChaCha20Poly1305: UInt8 = 1
    static let checkByteCount = 16
    static let headerByteCount = 4 + 3 + 4 + 4 + 16 + 24 + 16
    static let maximumMemLimit: UInt64 = 1 << 30
    static let maximumOpsLimit: UInt64 = 16

    /// Encrypts `bytes` under `password`.
    public static func seal(_ bytes: Data, password: String,
                            limits: Argon2id.Limits = .moderate) throws(StorageError) -> Data {
        guard limits.isSupported, limits.memLimit <= maximumMemLimit, limits.opsLimit <= maximumOpsLimit,
              limits.memLimit % 1024 == 0
        else { throw .unsupportedBackup(reason: "unsupported Argon2id limits") }
        let salt = SecureRandom.bytes(count: Argon2id.saltByteCount)
        let nonce = SecureRandom.bytes(count: XChaCha20Poly1305.nonceByteCount)
        var keys = try deriveKeys(password: password, salt: salt, limits: limits)
        defer { wipe(&keys.key) }
        var header = magic + [version, kdfArgon2id, aeadXChaCha20Poly1305]
        header += bigEndian(UInt32(limits.opsLimit)) + bigEndian(UInt32(limits.memLimit / 1024))
        header += salt + nonce + keys.check
        var plaintext = [UInt8](bytes)
        defer { wipe(&plaintext) }
        do {
            let sealed = try XChaCha20Poly1305.seal(plaintext, key: keys.key, nonce: nonce, associatedData: header)
            return Data(header + sealed)
        } catch {
            throw .unsupportedBackup(reason: "encryption failed")
        }
    }

    /// Decrypts a blob made by `seal`. Wrong password: `incorrectPassword`; altered ciphertext or
    /// header: `backupTampered`; not a backup, unknown version or out-of-bounds parameters:
    /// `unsupportedBackup`.
    public static func open(_ blob: Data, password: String) throws(StorageError) -> Data {
        let bytes = [UInt8](blob)
        guard bytes.count >= headerByteCount + XChaCha20Poly1305.tagByteCount else {
            throw .unsupportedBackup(reason: "too short")
        }
        var reader = ByteReader(bytes)
        guard reader.take(4) == magic else { throw .unsupportedBackup(reason: "not a SilentShard backup") }
        guard reader.u8() == version else { throw .unsupportedBackup(reason: "unknown version") }
        guard reader.u8() == kdfArgon2id, reader.u8() == aeadXChaCha20Poly1305 else {
            throw .unsupportedBackup(reason: "unknown algorithm")
        }
        guard let ops = reader.u32(), let memKiB = reader.u32(),
              let salt = reader.take(Argon2id.saltByteCount),
              let nonce = reader.take(XChaCha20Poly1305.nonceByteCount),
              let check = reader.take(checkByteCount)
        else { throw .unsupportedBackup(reason: "truncated") }
        let limits = Argon2id.Limits(opsLimit: UInt64(ops), memLimit: UInt64(memKiB) * 1024)
        guard limits.isSupported, limits.memLimit <= maximumMemLimit, limits.opsLimit <= maximumOpsLimit else {
            throw .unsupportedBackup(reason: "Argon2id limits out of bounds")
        }
        var keys = try deriveKeys(password: password, salt: salt, limits: limits)
        defer { wipe(&keys.key) }
        guard constantTimeEqual(keys.check, check) else { throw .incorrectPassword }
        let header = Array(bytes[..<headerByteCount])
        let sealed = Array(bytes[headerByteCount...])
        do {
            return Data(try XChaCha20Poly1305.open(sealed, key: keys.key, nonce: nonce, associatedData: header))
        } catch {
            throw .backupTampered
        }
    }

    private static func deriveKeys(password: String, salt: [UInt8],
                                   limits: Argon2id.Limits) throws(StorageError) -> (key: [UInt8], check: [UInt8]) {
        var passwordBytes = Array(password.precomposedStringWithCanonicalMapping.utf8)
        defer { wipe(&passwordBytes) }
        var derived: [UInt8]
        do {
            derived = try Argon2id.deriveKey(password: passwordBytes, salt: salt, outputByteCount: 64, limits: limits)
        } catch {
            throw .keyDerivationFailed
        }
        defer { wipe(&derived) }
        let key = Array(derived[0..<32])
        let check = Array(SHA256.hash(Array("SilentShard/backup/check/v1".utf8) + derived[32..<64]).prefix(checkByteCount))
        return (key, check)
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) }
    }

    private static func wipe(_ bytes: inout [UInt8]) {
        for index in bytes.indices { bytes[index] = 0 }
    }
}
