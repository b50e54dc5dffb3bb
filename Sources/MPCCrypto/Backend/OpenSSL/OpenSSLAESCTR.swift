#if !(canImport(CommonCrypto) || SILENTSHARD_COMMONCRYPTO_SHIM)
internal import COpenSSL

/// AES-256-CTR on Linux: an OpenSSL cipher context (AES-NI where the processor has it).
final class OpenSSLAESCTR: AESCTRBackendInterface {
    private let context: OpaquePointer

    init(key: [UInt8], counterBlock: [UInt8]) throws(CryptoError) {
        guard let context = EVP_CIPHER_CTX_new() else { throw .libraryFailure("EVP_CIPHER_CTX_new") }
        guard EVP_EncryptInit_ex2(context, OpenSSLAlgorithms.shared.aes256CTR, key, counterBlock, nil) == 1 else {
            EVP_CIPHER_CTX_free(context)
            throw .libraryFailure("EVP_EncryptInit_ex2")
        }
        self.context = context
    }

    deinit { EVP_CIPHER_CTX_free(context) }

    func encryptInPlace(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) {
        var remaining = count
        var cursor = bytes
        while remaining > 0 {
            let chunk = min(remaining, 1 << 30)
            var written: Int32 = 0
            _ = EVP_EncryptUpdate(context, cursor, &written, cursor, Int32(chunk))
            cursor += chunk
            remaining -= chunk
        }
    }
}
#endif
