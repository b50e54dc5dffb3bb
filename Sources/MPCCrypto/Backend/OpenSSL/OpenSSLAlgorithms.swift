#if !(canImport(CommonCrypto) && canImport(CryptoKit))
internal import COpenSSL

/// Digests and ciphers fetched from OpenSSL once per process (fetching per call costs 2.3×;
/// docs/design.md §5.1). Fetched objects are immutable and safe to share between threads.
final class OpenSSLAlgorithms: @unchecked Sendable {
    static let shared = OpenSSLAlgorithms()

    let sha256: OpaquePointer
    let sha512: OpaquePointer
    let aes256CTR: OpaquePointer

    private init() {
        // These algorithms are in OpenSSL's default provider; without them nothing here can work.
        guard let sha256 = EVP_MD_fetch(nil, "SHA256", nil),
              let sha512 = EVP_MD_fetch(nil, "SHA512", nil),
              let aes = EVP_CIPHER_fetch(nil, "AES-256-CTR", nil)
        else { preconditionFailure("OpenSSL default provider lacks SHA-256, SHA-512 or AES-256-CTR") }
        self.sha256 = sha256
        self.sha512 = sha512
        self.aes256CTR = aes
    }
}
#endif
