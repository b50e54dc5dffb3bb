internal import CSodium

/// Argon2id (RFC 9106, version 1.3) password hashing from libsodium (`crypto_pwhash`,
/// `crypto_pwhash_ALG_ARGON2ID13`), for deriving encryption keys from passwords.
public enum Argon2id {
    /// Salt length (16 bytes).
    public static var saltByteCount: Int { crypto_pwhash_saltbytes() }

    /// Cost parameters: passes over memory (`opsLimit`) and memory in bytes (`memLimit`).
    public struct Limits: Sendable, Equatable {
        public let opsLimit: UInt64
        public let memLimit: UInt64

        public init(opsLimit: UInt64, memLimit: UInt64) {
            self.opsLimit = opsLimit
            self.memLimit = memLimit
        }

        /// libsodium's INTERACTIVE limits: 2 passes, 64 MiB (well under a second on a phone).
        public static var interactive: Limits {
            Limits(opsLimit: UInt64(crypto_pwhash_opslimit_interactive()),
                   memLimit: UInt64(crypto_pwhash_memlimit_interactive()))
        }

        /// libsodium's MODERATE limits: 3 passes, 256 MiB (about a second on current hardware).
        public static var moderate: Limits {
            Limits(opsLimit: UInt64(crypto_pwhash_opslimit_moderate()),
                   memLimit: UInt64(crypto_pwhash_memlimit_moderate()))
        }

        /// libsodium's SENSITIVE limits: 4 passes, 1 GiB (several seconds; desktops and servers).
        public static var sensitive: Limits {
            Limits(opsLimit: UInt64(crypto_pwhash_opslimit_sensitive()),
                   memLimit: UInt64(crypto_pwhash_memlimit_sensitive()))
        }

        /// True when libsodium accepts these limits for Argon2id.
        public var isSupported: Bool {
            opsLimit >= UInt64(crypto_pwhash_opslimit_min()) && opsLimit <= UInt64(crypto_pwhash_opslimit_max())
                && memLimit >= UInt64(crypto_pwhash_memlimit_min())
                && memLimit <= UInt64(min(crypto_pwhash_memlimit_max(), Int.max))
        }
    }

    /// Derives `outputByteCount` bytes from `password` and a `saltByteCount`-byte salt.
    /// Fails with `.libraryFailure` when libsodium cannot run (typically: out of memory).
    public static func deriveKey(password: [UInt8], salt: [UInt8], outputByteCount: Int,
                                 limits: Limits) throws(CryptoError) -> [UInt8] {
        Sodium.ensureReady()
        guard salt.count == saltByteCount else { throw .invalidLength(expected: saltByteCount, actual: salt.count) }
        guard limits.isSupported, outputByteCount >= Int(crypto_pwhash_bytes_min()) else {
            throw .libraryFailure("unsupported Argon2id parameters")
        }
        var out = [UInt8](repeating: 0, count: outputByteCount)
        // A NUL-terminated copy gives a non-nil pointer even for an empty password; wiped afterwards.
        var chars = password.map { CChar(bitPattern: $0) } + [0]
        defer { chars.withUnsafeMutableBytes { sodium_memzero($0.baseAddress, $0.count) } }
        let rc = crypto_pwhash(&out, UInt64(outputByteCount), chars, UInt64(password.count), salt,
                               limits.opsLimit, Int(limits.memLimit), crypto_pwhash_alg_argon2id13())
        guard rc == 0 else { throw .libraryFailure("crypto_pwhash failed") }
        return out
    }
}
