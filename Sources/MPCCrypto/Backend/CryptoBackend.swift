/// The platform cryptography behind MPCCrypto's SHA-2 (with copyable midstates for the DKLs23 hot loops), HMAC,
/// AES-256-CTR and P-256: one internal interface per primitive, one backend per platform in its own folder
/// (`Backend/OpenSSL`, `Backend/CommonCrypto`, `Backend/CryptoKit`), selected here at compile time — the
/// swift-crypto pattern (issue 19). No C type appears outside a backend file.
///
/// * Linux: OpenSSL 3 for everything.
/// * Apple: CommonCrypto for SHA-2, HMAC and AES-CTR (`CC_SHA256_CTX` / `CC_SHA512_CTX` are plain structs, so
///   midstates are copies), CryptoKit for P-256.
/// * Linux CI (`SILENTSHARD_COMMONCRYPTO_SHIM`, `scripts/check-commoncrypto-backend`): the CommonCrypto backend
///   compiled against `CCommonCryptoShim`, a test module that declares exactly the CommonCrypto functions this
///   backend calls with Apple's C signatures, implemented over OpenSSL, so the backend's code runs the same
///   known-answer tests here. CryptoKit cannot be shimmed (Swift API): `Backend/CryptoKit` is the only P-256 code
///   no Linux build compiles (`docs/apple.md`).
#if canImport(CommonCrypto) || SILENTSHARD_COMMONCRYPTO_SHIM
typealias SHA2Backend = CommonCryptoSHA2
typealias AESCTRBackend = CommonCryptoAESCTR
#else
typealias SHA2Backend = OpenSSLSHA2
typealias AESCTRBackend = OpenSSLAESCTR
#endif

#if canImport(CryptoKit)
typealias P256Backend = CryptoKitP256
#else
typealias P256Backend = OpenSSLP256
#endif

/// Which backends this build selected (for tests and diagnostics).
package enum CryptoBackendSelection {
    /// "CommonCrypto" or "OpenSSL": SHA-2, HMAC and AES-CTR.
    package static var symmetric: String { SHA2Backend.name }
}

/// SHA-256 and SHA-512 over a state buffer the caller owns (`stateByteCount` bytes, 16-byte aligned). The state is
/// plain memory: copying it saves a midstate.
protocol SHA2BackendInterface {
    static var name: String { get }
    static func stateByteCount(_ algorithm: SHA2Algorithm) -> Int
    static func initialize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer)
    static func update(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, bytes: UnsafeRawPointer, count: Int)
    /// Writes the digest (32 or 64 bytes) to `output`; the state must be initialised again before reuse.
    static func finalize(_ algorithm: SHA2Algorithm, state: UnsafeMutableRawPointer, output: UnsafeMutablePointer<UInt8>)
    /// HMAC (RFC 2104) of `data` under `key`.
    static func hmac(_ algorithm: SHA2Algorithm, key: [UInt8], data: [UInt8]) -> [UInt8]
}

/// The AES-256-CTR key stream (big-endian 128-bit counter) under a 32-byte key and a 16-byte initial block.
protocol AESCTRBackendInterface: AnyObject {
    init(key: [UInt8], counterBlock: [UInt8]) throws(CryptoError)
    /// Encrypts `count` bytes at `bytes` in place (zeros in: key stream out).
    func encryptInPlace(_ bytes: UnsafeMutablePointer<UInt8>, count: Int)
}

/// ECDSA over P-256 with SHA-256; signatures as raw r ‖ s (32 + 32 bytes, big-endian).
protocol P256BackendInterface {
    associatedtype PrivateKey: Sendable
    associatedtype PublicKey: Sendable
    /// A private key from a big-endian scalar in [1, n), and its public key uncompressed (65 bytes).
    static func privateKey(rawRepresentation: [UInt8]) throws(CryptoError) -> (key: PrivateKey, x963: [UInt8])
    /// A public key from SEC1 bytes (33 or 65), checked on the curve, and its uncompressed encoding.
    static func publicKey(sec1: [UInt8]) throws(CryptoError) -> (key: PublicKey, x963: [UInt8])
    /// r ‖ s of an ECDSA signature of SHA-256(message).
    static func sign(_ message: [UInt8], with key: PrivateKey) throws(CryptoError) -> [UInt8]
    /// Whether r ‖ s is a valid signature of SHA-256(message).
    static func isValidSignature(_ rawSignature: [UInt8], for message: [UInt8], under key: PublicKey) -> Bool
}
