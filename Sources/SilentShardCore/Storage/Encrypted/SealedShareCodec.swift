import Foundation
import MPCCrypto

/// The bytes `EncryptedStorageClient` stores in place of a share:
///
///     "SSEN" ‖ u8 version (1) ‖ key check (8) ‖ nonce (24) ‖ XChaCha20-Poly1305(share) ‖ tag (16)
///
/// with associated data `header ‖ u8 slot (1 staged, 2 current) ‖ u8 kind ‖ u16 len ‖ key id (UTF-8,
/// canonical)`, where `header` is the first 13 bytes above. So a sealed share opens only under its key,
/// its key id, its slot and its kind; the nonce is drawn at random for every write (192 bits: no
/// collision in any realistic number of writes under one key).
enum SealedShareCodec {
    static let magic: [UInt8] = Array("SSEN".utf8)
    static let version: UInt8 = 1
    static let checkByteCount = 8
    static let headerByteCount = 4 + 1 + checkByteCount
    static let minimumByteCount = headerByteCount + XChaCha20Poly1305.nonceByteCount + XChaCha20Poly1305.tagByteCount

    /// Which slot of a `KeyshareRecord` a share is in (bound into the associated data).
    enum Slot: UInt8 {
        case staged = 1
        case current = 2
    }

    /// Seals `share` under a fresh random nonce (`nonce` is for known-answer tests only).
    static func seal(_ share: StoredShare, keyId: String, slot: Slot, key: StorageKey,
                     nonce: [UInt8] = SecureRandom.bytes(count: XChaCha20Poly1305.nonceByteCount)) throws(StorageError) -> StoredShare {
        let header = magic + [version] + key.check
        let sealed: [UInt8]
        do {
            sealed = try XChaCha20Poly1305.seal(Array(share.bytes), key: key.bytes, nonce: nonce,
                                                associatedData: associatedData(header, keyId: keyId, slot: slot, kind: share.kind))
        } catch {
            throw .invalidStorageKey  // only a wrong key or nonce length fails, and both are fixed here
        }
        return StoredShare(kind: share.kind, bytes: header + nonce + sealed)
    }

    static func open(_ stored: StoredShare, keyId: String, slot: Slot, key: StorageKey) throws(StorageError) -> StoredShare {
        let bytes = Array(stored.bytes)
        guard bytes.count >= magic.count + 1, Array(bytes[0..<magic.count]) == magic else {
            throw .corruptRecord(keyId: keyId, reason: "not an encrypted record")
        }
        let recordVersion = bytes[magic.count]
        guard recordVersion == version else { throw .unsupportedRecordVersion(keyId: keyId, version: recordVersion) }
        guard bytes.count >= minimumByteCount else { throw .corruptRecord(keyId: keyId, reason: "truncated") }
        let header = Array(bytes[0..<headerByteCount])
        guard constantTimeEqual(Array(header[(magic.count + 1)...]), key.check) else { throw .wrongStorageKey(keyId: keyId) }
        let nonceEnd = headerByteCount + XChaCha20Poly1305.nonceByteCount
        let nonce = Array(bytes[headerByteCount..<nonceEnd])
        let plaintext: [UInt8]
        do {
            plaintext = try XChaCha20Poly1305.open(Array(bytes[nonceEnd...]), key: key.bytes, nonce: nonce,
                                                   associatedData: associatedData(header, keyId: keyId, slot: slot, kind: stored.kind))
        } catch {
            throw .recordNotAuthentic(keyId: keyId)
        }
        return StoredShare(kind: stored.kind, bytes: plaintext)
    }

    private static func associatedData(_ header: [UInt8], keyId: String, slot: Slot, kind: StoredShareKind) -> [UInt8] {
        let id = Array(keyId.utf8)  // canonical key ids are at most 267 bytes
        return header + [slot.rawValue, kind.rawValue, UInt8(id.count >> 8), UInt8(truncatingIfNeeded: id.count)] + id
    }
}
