import Foundation
import MPCCrypto

/// The byte format of a stored record (file store and SQLite store):
///
///     "SSKR" ‖ u8 version (1) ‖ u16 len ‖ key id (UTF-8, canonical)
///     ‖ u8 flags (bit 0 staged, bit 1 current; other bits 0)
///     ‖ [u8 kind ‖ u32 len ‖ bytes] for staged, then current, each if present
///     ‖ SHA-256 of everything before
///
/// Integers are big-endian. Decoding is strict: unknown version, kind or flag bits, lengths past the
/// end, trailing bytes or a checksum mismatch are `corruptRecord`; a key id other than the one asked
/// for is `keyIdMismatch` (a file or row copied under another name). The checksum catches damage,
/// not an attacker who can rewrite the file (that one could also rewrite the checksum).
package enum KeyshareRecordCodec {
    static let magic: [UInt8] = Array("SSKR".utf8)
    static let version: UInt8 = 1
    /// Upper bound for one share's bytes (DKLs23 shares are a few KiB).
    static let maximumShareBytes = 1 << 24
    /// Upper bound for an encoded record.
    static let maximumRecordBytes = 2 * maximumShareBytes + 4096

    package static func encode(_ record: KeyshareRecord) throws(StorageError) -> [UInt8] {
        guard record.staged != nil || record.current != nil else { throw .emptyRecord(keyId: record.keyId) }
        let keyId = Array(record.keyId.utf8)
        var out = magic
        out.append(version)
        appendU16(&out, UInt16(keyId.count))
        out += keyId
        out.append((record.staged != nil ? 1 : 0) | (record.current != nil ? 2 : 0))
        for share in [record.staged, record.current].compactMap({ $0 }) {
            guard share.bytes.count <= maximumShareBytes else { throw .recordTooLarge(byteCount: share.bytes.count) }
            out.append(share.kind.rawValue)
            appendU32(&out, UInt32(share.bytes.count))
            out += share.bytes
        }
        out += SHA256.hash(out)
        return out
    }

    package static func decode(_ bytes: [UInt8], expectedKeyId keyId: String) throws(StorageError) -> KeyshareRecord {
        func corrupt(_ reason: String) -> StorageError { .corruptRecord(keyId: keyId, reason: reason) }
        guard bytes.count <= maximumRecordBytes else { throw corrupt("too large") }
        guard bytes.count >= magic.count + 1 + 2 + 1 + SHA256.byteCount else { throw corrupt("truncated") }
        let body = Array(bytes[..<(bytes.count - SHA256.byteCount)])
        guard constantTimeEqual(SHA256.hash(body), Array(bytes[(bytes.count - SHA256.byteCount)...])) else {
            throw corrupt("checksum mismatch")
        }
        var reader = ByteReader(body)
        guard let head = reader.take(magic.count), head == magic else { throw corrupt("bad magic") }
        guard let version = reader.u8(), version == Self.version else { throw corrupt("unsupported version") }
        guard let idLength = reader.u16(), let idBytes = reader.take(Int(idLength)) else { throw corrupt("truncated") }
        guard let storedId = String(validating: idBytes, as: UTF8.self) else { throw corrupt("bad key id") }
        guard storedId == keyId else { throw .keyIdMismatch(keyId: keyId) }
        guard let flags = reader.u8(), flags & ~3 == 0, flags != 0 else { throw corrupt("bad flags") }
        var shares: [StoredShare?] = []
        for bit in [UInt8(1), 2] {
            guard flags & bit != 0 else { shares.append(nil); continue }
            guard let rawKind = reader.u8(), let kind = StoredShareKind(rawValue: rawKind) else {
                throw corrupt("unknown share kind")
            }
            guard let length = reader.u32(), Int(length) <= maximumShareBytes,
                  let share = reader.take(Int(length))
            else { throw corrupt("bad share length") }
            shares.append(StoredShare(kind: kind, bytes: Data(share)))
        }
        guard reader.isAtEnd else { throw corrupt("trailing bytes") }
        return KeyshareRecord(keyId: keyId, staged: shares[0], current: shares[1])
    }

    private static func appendU16(_ out: inout [UInt8], _ value: UInt16) {
        out += [UInt8(value >> 8), UInt8(truncatingIfNeeded: value)]
    }

    private static func appendU32(_ out: inout [UInt8], _ value: UInt32) {
        out += (0..<4).map { UInt8(truncatingIfNeeded: value >> (24 - 8 * UInt32($0))) }
    }
}

/// Bounds-checked big-endian reads; every read returns nil instead of trapping past the end.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func take(_ count: Int) -> [UInt8]? {
        guard count >= 0, bytes.count - offset >= count else { return nil }
        defer { offset += count }
        return Array(bytes[offset..<(offset + count)])
    }

    mutating func u8() -> UInt8? { take(1)?[0] }

    mutating func u16() -> UInt16? { take(2).map { UInt16($0[0]) << 8 | UInt16($0[1]) } }

    mutating func u32() -> UInt32? { take(4).map { $0.reduce(0) { $0 << 8 | UInt32($1) } } }

    mutating func u64() -> UInt64? { take(8).map { $0.reduce(0) { $0 << 8 | UInt64($1) } } }
}
