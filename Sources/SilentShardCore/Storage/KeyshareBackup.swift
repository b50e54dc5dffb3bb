import Foundation
import MPCCrypto

/// Password-protected backups of a keyshare (duo has no redundancy: losing the app's share loses the
/// wallet unless it was exported or backed up).
///
/// Blob layout (integers big-endian):
///
///     "SSBK" ‖ u8 version ‖ u8 kdf (1 = Argon2id v1.3) ‖ u8 aead (1 = XChaCha20-Poly1305)
///     ‖ u32 opsLimit ‖ u32 memLimit in KiB ‖ salt (16) ‖ nonce (24) ‖ check (16)
///     ‖ version 2 only: key id (32) ‖ generation (32)
///     ‖ ciphertext ‖ tag (16)
///
/// Version 2 (`seal(_:password:limits:)` of a `Keyshare`) encrypts `Keyshare.serialized()` and records
/// in the header the key id and generation the backup was made from, so a backup that a later refresh
/// made stale is recognized — readable without the password (`info(_:)`), and checked when opened
/// against the app's record (`DuoSession`/`TrioSession.restoreBackup`). A refreshed share with an old
/// backup is the classic way MPC wallets lose funds: the old share no longer combines with the nodes'.
/// Version 1 (`seal(_ bytes:…)`) holds opaque bytes and no generation; both versions open.
///
/// Argon2id(password, salt) yields 64 bytes: the first 32 are the XChaCha20-Poly1305 key, the last 32
/// feed the check value `SHA-256("SilentShard/backup/check/v1" ‖ k2)[0..<16]`, which tells a wrong
/// password (`incorrectPassword`) from an altered blob (`backupTampered`); it gives an attacker no
/// shortcut, since every guess still costs one Argon2id evaluation. Everything before the ciphertext
/// is the AEAD's associated data, so no header field (the key id and generation included) can be
/// changed undetected. Salt and nonce are fresh random for every backup. Passwords are NFC-normalized
/// UTF-8, so the same password typed on different keyboards opens the blob.
///
/// Limits: `.moderate` (3 passes, 256 MiB) by default; `.interactive` (2 passes, 64 MiB) for
/// memory-constrained devices (iOS extensions); `.sensitive` (4 passes, 1 GiB) on desktops. `open`
/// refuses blobs asking for more than 1 GiB or 16 passes, so a crafted blob cannot exhaust memory.
public enum KeyshareBackup {
    static let magic: [UInt8] = Array("SSBK".utf8)
    static let version: UInt8 = 1
    static let keyshareVersion: UInt8 = 2
    /// Version 2's key id and generation.
    static let provenanceByteCount = 64
    static let kdfArgon2id: UInt8 = 1
    static let aeadXChaCha20Poly1305: UInt8 = 1
    static let checkByteCount = 16
    static let headerByteCount = 4 + 3 + 4 + 4 + 16 + 24 + 16
    static let maximumMemLimit: UInt64 = 1 << 30
    static let maximumOpsLimit: UInt64 = 16

    /// Encrypts `bytes` under `password` (version 1: no key id or generation; prefer sealing a
    /// `Keyshare`, which records them).
    public static func seal(_ bytes: Data, password: String,
                            limits: Argon2id.Limits = .moderate) throws(StorageError) -> Data {
        try seal([UInt8](bytes), version: version, provenance: [], password: password, limits: limits)
    }

    /// Encrypts `keyshare` under `password` (version 2), recording its key id and generation in the
    /// authenticated header. Treat the blob as you would the password: it opens with it alone.
    public static func seal(_ keyshare: Keyshare, password: String,
                            limits: Argon2id.Limits = .moderate) throws(StorageError) -> Data {
        var plaintext = [UInt8](keyshare.serialized())
        defer { wipe(&plaintext) }
        guard keyshare.keyIdBytes.count == 32, keyshare.generation.count == 32 else {
            throw .unsupportedBackup(reason: "keyshare without a 32-byte key id and generation")
        }
        return try seal(plaintext, version: keyshareVersion, provenance: keyshare.keyIdBytes + [UInt8](keyshare.generation),
                        password: password, limits: limits)
    }

    private static func seal(_ plaintext: [UInt8], version: UInt8, provenance: [UInt8], password: String,
                             limits: Argon2id.Limits) throws(StorageError) -> Data {
        guard limits.isSupported, limits.memLimit <= maximumMemLimit, limits.opsLimit <= maximumOpsLimit,
              limits.memLimit % 1024 == 0
        else { throw .unsupportedBackup(reason: "unsupported Argon2id limits") }
        let salt = SecureRandom.bytes(count: Argon2id.saltByteCount)
        let nonce = SecureRandom.bytes(count: XChaCha20Poly1305.nonceByteCount)
        var keys = try deriveKeys(password: password, salt: salt, limits: limits)
        defer { wipe(&keys.key) }
        var header = magic + [version, kdfArgon2id, aeadXChaCha20Poly1305]
        header += bigEndian(UInt32(limits.opsLimit)) + bigEndian(UInt32(limits.memLimit / 1024))
        header += salt + nonce + keys.check + provenance
        do {
            let sealed = try XChaCha20Poly1305.seal(plaintext, key: keys.key, nonce: nonce, associatedData: header)
            return Data(header + sealed)
        } catch {
            throw .unsupportedBackup(reason: "encryption failed")
        }
    }

    /// What a backup's header says, readable without the password (and authenticated when it is opened).
    public struct Info: Sendable, Equatable {
        /// The format version: 1 (opaque bytes) or 2 (a keyshare with its key id and generation).
        public let version: UInt8
        /// Version 2: the key id (hex) the backup was made from; nil for version 1.
        public let keyId: String?
        /// Version 2: the generation (32 bytes) the backup holds; nil for version 1.
        public let generation: Data?
    }

    /// The header of `blob`: its version and, for version 2, the key id and generation it holds. Not yet
    /// authenticated (only opening with the password authenticates it); `unsupportedBackup` for anything
    /// that is not a backup of a known version.
    public static func info(_ blob: Data) throws(StorageError) -> Info {
        let header = try parseHeader([UInt8](blob))
        return Info(version: header.version, keyId: header.provenance.isEmpty ? nil : Hex.encode(Array(header.provenance.prefix(32))),
                    generation: header.provenance.isEmpty ? nil : Data(header.provenance.suffix(32)))
    }

    /// Decrypts a blob made by either `seal`: the sealed bytes (for version 2, the keyshare's
    /// serialization). Wrong password: `incorrectPassword`; altered ciphertext or header:
    /// `backupTampered`; not a backup, unknown version or out-of-bounds parameters: `unsupportedBackup`.
    public static func open(_ blob: Data, password: String) throws(StorageError) -> Data {
        Data(try openBlob([UInt8](blob), password: password).plaintext)
    }

    /// Decrypts a version-2 blob to its keyshare. A version-1 blob is `unsupportedBackup` (open it with
    /// `open(_:password:)`); a keyshare whose key id or generation differs from the authenticated header
    /// is `backupTampered`. This does not know which generation is current: a session's
    /// `restoreBackup` checks that.
    public static func openKeyshare(_ blob: Data, password: String) throws(StorageError) -> Keyshare {
        var opened = try openBlob([UInt8](blob), password: password)
        defer { wipe(&opened.plaintext) }
        guard opened.header.version == keyshareVersion else { throw .unsupportedBackup(reason: "version 1 holds no keyshare record") }
        // Authentic but not a keyshare this SDK decodes (a newer keyshare format).
        guard let keyshare = try? Keyshare(serialized: Data(opened.plaintext)) else {
            throw .unsupportedBackup(reason: "keyshare format not supported")
        }
        guard keyshare.keyIdBytes + [UInt8](keyshare.generation) == opened.header.provenance else { throw .backupTampered }
        return keyshare
    }

    private struct Header {
        var version: UInt8
        var limits: Argon2id.Limits
        var salt: [UInt8]
        var nonce: [UInt8]
        var check: [UInt8]
        var provenance: [UInt8]
        var byteCount: Int
    }

    private static func parseHeader(_ bytes: [UInt8]) throws(StorageError) -> Header {
        guard bytes.count >= headerByteCount + XChaCha20Poly1305.tagByteCount else {
            throw .unsupportedBackup(reason: "too short")
        }
        var reader = ByteReader(bytes)
        guard reader.take(4) == magic else { throw .unsupportedBackup(reason: "not a SilentShard backup") }
        guard let blobVersion = reader.u8(), blobVersion == version || blobVersion == keyshareVersion else {
            throw .unsupportedBackup(reason: "unknown version")
        }
        guard reader.u8() == kdfArgon2id, reader.u8() == aeadXChaCha20Poly1305 else {
            throw .unsupportedBackup(reason: "unknown algorithm")
        }
        guard let ops = reader.u32(), let memKiB = reader.u32(),
              let salt = reader.take(Argon2id.saltByteCount),
              let nonce = reader.take(XChaCha20Poly1305.nonceByteCount),
              let check = reader.take(checkByteCount),
              let provenance = reader.take(blobVersion == keyshareVersion ? provenanceByteCount : 0)
        else { throw .unsupportedBackup(reason: "truncated") }
        let byteCount = headerByteCount + provenance.count
        guard bytes.count >= byteCount + XChaCha20Poly1305.tagByteCount else { throw .unsupportedBackup(reason: "truncated") }
        let limits = Argon2id.Limits(opsLimit: UInt64(ops), memLimit: UInt64(memKiB) * 1024)
        guard limits.isSupported, limits.memLimit <= maximumMemLimit, limits.opsLimit <= maximumOpsLimit else {
            throw .unsupportedBackup(reason: "Argon2id limits out of bounds")
        }
        return Header(version: blobVersion, limits: limits, salt: salt, nonce: nonce, check: check, provenance: provenance,
                      byteCount: byteCount)
    }

    private static func openBlob(_ bytes: [UInt8], password: String) throws(StorageError) -> (header: Header, plaintext: [UInt8]) {
        let header = try parseHeader(bytes)
        var keys = try deriveKeys(password: password, salt: header.salt, limits: header.limits)
        defer { wipe(&keys.key) }
        guard constantTimeEqual(keys.check, header.check) else { throw .incorrectPassword }
        let associatedData = Array(bytes[..<header.byteCount])
        let sealed = Array(bytes[header.byteCount...])
        do {
            return (header, try XChaCha20Poly1305.open(sealed, key: keys.key, nonce: header.nonce, associatedData: associatedData))
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
