#if canImport(CommonCrypto) || SILENTSHARD_COMMONCRYPTO_SHIM
#if canImport(CommonCrypto)
import CommonCrypto
#else
internal import CCommonCryptoShim
#endif

/// AES-256-CTR on Apple platforms: a CommonCrypto cryptor in CTR mode with a big-endian counter (as OpenSSL's).
final class CommonCryptoAESCTR: AESCTRBackendInterface {
    private let cryptor: CCCryptorRef

    init(key: [UInt8], counterBlock: [UInt8]) throws(CryptoError) {
        guard key.count == 32, counterBlock.count == 16 else { throw .invalidLength(expected: 32, actual: key.count) }
        var made: CCCryptorRef?
        let status = CCCryptorCreateWithMode(CCOperation(kCCEncrypt), CCMode(kCCModeCTR), CCAlgorithm(kCCAlgorithmAES),
                                             CCPadding(ccNoPadding), counterBlock, key, key.count, nil, 0, 0,
                                             CCModeOptions(kCCModeOptionCTR_BE), &made)
        guard status == CCCryptorStatus(kCCSuccess), let made else { throw .libraryFailure("CCCryptorCreateWithMode") }
        cryptor = made
    }

    deinit { _ = CCCryptorRelease(cryptor) }

    func encryptInPlace(_ bytes: UnsafeMutablePointer<UInt8>, count: Int) {
        var moved = 0
        _ = CCCryptorUpdate(cryptor, bytes, count, bytes, count, &moved)
    }
}
#endif
