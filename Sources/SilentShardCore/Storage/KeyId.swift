/// Validation and canonical form of the key ids a `StorageClient` accepts.
///
/// Accepted: a hex string (the API's key ids are hex of 32-byte key ids; session.md §1.5), and the
/// SDK's reserved ids `"~ss/presig/" + hex` (presignature tombstones, session.md §8.2), `"~ss/ban/" + hex`
/// (bans, session.md §9.4) and `"~ss/backup/" + hex` (the generation of the newest backup of a key). Hex may be upper- or lowercase (session.md §0: parsers accept both) and is canonicalized to
/// lowercase, so `AB…` and `ab…` name one record even on case-insensitive file systems. Anything else
/// (empty, odd length, `/`, `..`, NUL, over 256 hex digits) is `StorageError.invalidKeyId`.
public enum KeyId {
    /// Reserved prefix of presignature tombstones.
    public static let presignaturePrefix = "~ss/presig/"
    /// Reserved prefix of ban records.
    public static let banPrefix = "~ss/ban/"
    /// Reserved prefix of backup records (`BackupState`).
    public static let backupPrefix = "~ss/backup/"
    /// Longest accepted hex part (a 65-byte SEC1 P-256 node key is 130 digits).
    public static let maximumHexDigits = 256

    /// The canonical form of `keyId`, or `invalidKeyId`.
    public static func canonical(_ keyId: String) throws(StorageError) -> String {
        for prefix in [presignaturePrefix, banPrefix, backupPrefix] where keyId.hasPrefix(prefix) {
            return prefix + (try canonicalHex(String(keyId.dropFirst(prefix.count))))
        }
        return try canonicalHex(keyId)
    }

    /// A name safe to use as a single path component: hex stays as is; reserved ids become
    /// `presig-<hex>` / `ban-<hex>` / `backup-<hex>` (`-` is not a hex digit, so the forms cannot collide).
    static func fileStem(_ canonicalKeyId: String) -> String {
        if canonicalKeyId.hasPrefix(presignaturePrefix) {
            return "presig-" + canonicalKeyId.dropFirst(presignaturePrefix.count)
        }
        if canonicalKeyId.hasPrefix(banPrefix) { return "ban-" + canonicalKeyId.dropFirst(banPrefix.count) }
        if canonicalKeyId.hasPrefix(backupPrefix) { return "backup-" + canonicalKeyId.dropFirst(backupPrefix.count) }
        return canonicalKeyId
    }

    private static func canonicalHex(_ hex: String) throws(StorageError) -> String {
        let utf8 = Array(hex.utf8)
        guard !utf8.isEmpty, utf8.count % 2 == 0, utf8.count <= maximumHexDigits else { throw .invalidKeyId }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count)
        for byte in utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "f"): out.append(byte)
            case UInt8(ascii: "A")...UInt8(ascii: "F"): out.append(byte + 32)
            default: throw .invalidKeyId
            }
        }
        return String(decoding: out, as: UTF8.self)
    }
}
