internal import CSodium

/// ChaCha20-Poly1305 (RFC 8439, 96-bit nonce) from libsodium. Output is ciphertext ‖ 16-byte tag.
public enum ChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 12
    public static let tagByteCount = 16

    private static let algorithm = SodiumAEAD(
        nonceByteCount: nonceByteCount,
        encrypt: crypto_aead_chacha20poly1305_ietf_encrypt,
        decrypt: crypto_aead_chacha20poly1305_ietf_decrypt)

    /// Encrypts and authenticates `plaintext`, authenticating `associatedData` too.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8],
                            associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try algorithm.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// Verifies and decrypts; a wrong key, nonce, ciphertext or associated data is `.authenticationFailed`.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8],
                            associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try algorithm.open(sealed, key: key, nonce: nonce, associatedData: associatedData)
    }
}

/// XChaCha20-Poly1305 (192-bit nonces, safe to draw at random) from libsodium. Output is
/// ciphertext ‖ 16-byte tag.
public enum XChaCha20Poly1305 {
    public static let keyByteCount = 32
    public static let nonceByteCount = 24
    public static let tagByteCount = 16

    private static let algorithm = SodiumAEAD(
        nonceByteCount: nonceByteCount,
        encrypt: crypto_aead_xchacha20poly1305_ietf_encrypt,
        decrypt: crypto_aead_xchacha20poly1305_ietf_decrypt)

    /// Encrypts and authenticates `plaintext`, authenticating `associatedData` too.
    public static func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8],
                            associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try algorithm.seal(plaintext, key: key, nonce: nonce, associatedData: associatedData)
    }

    /// Verifies and decrypts; a wrong key, nonce, ciphertext or associated data is `.authenticationFailed`.
    public static func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8],
                            associatedData: [UInt8] = []) throws(CryptoError) -> [UInt8] {
        try algorithm.open(sealed, key: key, nonce: nonce, associatedData: associatedData)
    }
}

/// The shape libsodium's IETF AEAD functions share.
private struct SodiumAEAD: Sendable {
    typealias Encrypt = @Sendable (
        UnsafeMutablePointer<UInt8>, UnsafeMutablePointer<UInt64>?, UnsafePointer<UInt8>?, UInt64,
        UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>?, UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32
    typealias Decrypt = @Sendable (
        UnsafeMutablePointer<UInt8>?, UnsafeMutablePointer<UInt64>?, UnsafeMutablePointer<UInt8>?,
        UnsafePointer<UInt8>, UInt64, UnsafePointer<UInt8>?, UInt64, UnsafePointer<UInt8>, UnsafePointer<UInt8>
    ) -> Int32

    let nonceByteCount: Int
    let encrypt: Encrypt
    let decrypt: Decrypt
    let keyByteCount = 32
    let tagByteCount = 16

    private func check(key: [UInt8], nonce: [UInt8]) throws(CryptoError) {
        guard key.count == keyByteCount else { throw .invalidLength(expected: keyByteCount, actual: key.count) }
        guard nonce.count == nonceByteCount else { throw .invalidLength(expected: nonceByteCount, actual: nonce.count) }
        Sodium.ensureReady()
    }

    func seal(_ plaintext: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        var out = [UInt8](repeating: 0, count: plaintext.count + tagByteCount)
        var length: UInt64 = 0
        _ = encrypt(&out, &length, plaintext, UInt64(plaintext.count), associatedData, UInt64(associatedData.count),
                    nil, nonce, key)
        return out
    }

    func open(_ sealed: [UInt8], key: [UInt8], nonce: [UInt8], associatedData: [UInt8]) throws(CryptoError) -> [UInt8] {
        try check(key: key, nonce: nonce)
        guard sealed.count >= tagByteCount else { throw .authenticationFailed }
        var out = [UInt8](repeating: 0, count: sealed.count - tagByteCount)
        var length: UInt64 = 0
        guard decrypt(&out, &length, nil, sealed, UInt64(sealed.count), associatedData, UInt64(associatedData.count),
                      nonce, key) == 0
        else { throw .authenticationFailed }
        return out
    }
}
