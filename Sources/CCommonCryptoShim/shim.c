/* CCommonCryptoShim over OpenSSL 3 (see the header). Behaviour matches CommonCrypto for what the backend uses:
 * SHA-256/512 contexts, HMAC-SHA-256/512, AES-256 in CTR mode with a big-endian counter, encrypt only. */
#include "CCommonCryptoShim.h"
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>
#include <stdlib.h>
#include <string.h>

#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
_Static_assert(sizeof(SHA256_CTX) <= sizeof(CC_SHA256_CTX), "CC_SHA256_CTX too small for OpenSSL's state");
_Static_assert(sizeof(SHA512_CTX) <= sizeof(CC_SHA512_CTX), "CC_SHA512_CTX too small for OpenSSL's state");

int CC_SHA256_Init(CC_SHA256_CTX *c) { return SHA256_Init((SHA256_CTX *)c); }
int CC_SHA256_Update(CC_SHA256_CTX *c, const void *data, CC_LONG len) { return SHA256_Update((SHA256_CTX *)c, data, len); }
int CC_SHA256_Final(unsigned char *md, CC_SHA256_CTX *c) { return SHA256_Final(md, (SHA256_CTX *)c); }
int CC_SHA512_Init(CC_SHA512_CTX *c) { return SHA512_Init((SHA512_CTX *)c); }
int CC_SHA512_Update(CC_SHA512_CTX *c, const void *data, CC_LONG len) { return SHA512_Update((SHA512_CTX *)c, data, len); }
int CC_SHA512_Final(unsigned char *md, CC_SHA512_CTX *c) { return SHA512_Final(md, (SHA512_CTX *)c); }
#pragma clang diagnostic pop

void CCHmac(CCHmacAlgorithm algorithm, const void *key, size_t keyLength, const void *data, size_t dataLength, void *macOut) {
    const EVP_MD *md = algorithm == kCCHmacAlgSHA512 ? EVP_sha512() : algorithm == kCCHmacAlgSHA256 ? EVP_sha256() : NULL;
    static const unsigned char empty[1] = {0};
    unsigned int length = 0;
    if (md == NULL) return;
    HMAC(md, keyLength ? key : empty, (int)keyLength, dataLength ? data : empty, dataLength, macOut, &length);
}

struct _CCCryptor { EVP_CIPHER_CTX *context; };

CCCryptorStatus CCCryptorCreateWithMode(CCOperation op, CCMode mode, CCAlgorithm alg, CCPadding padding, const void *iv,
                                        const void *key, size_t keyLength, const void *tweak, size_t tweakLength,
                                        int numRounds, CCModeOptions options, CCCryptorRef *cryptorRef) {
    (void)padding; (void)tweak; (void)tweakLength; (void)numRounds;
    if (cryptorRef == NULL || op != kCCEncrypt || mode != kCCModeCTR || alg != kCCAlgorithmAES || keyLength != 32
        || iv == NULL || key == NULL || (options != 0 && options != kCCModeOptionCTR_BE)) return kCCUnimplemented;
    struct _CCCryptor *made = malloc(sizeof *made);
    if (made == NULL) return kCCMemoryFailure;
    made->context = EVP_CIPHER_CTX_new();
    if (made->context == NULL || EVP_EncryptInit_ex(made->context, EVP_aes_256_ctr(), NULL, key, iv) != 1) {
        EVP_CIPHER_CTX_free(made->context);
        free(made);
        return kCCParamError;
    }
    *cryptorRef = made;
    return kCCSuccess;
}

CCCryptorStatus CCCryptorUpdate(CCCryptorRef cryptorRef, const void *dataIn, size_t dataInLength, void *dataOut,
                                size_t dataOutAvailable, size_t *dataOutMoved) {
    if (cryptorRef == NULL || dataOutAvailable < dataInLength) return kCCBufferTooSmall;
    size_t done = 0;
    while (done < dataInLength) {
        size_t piece = dataInLength - done > (1u << 30) ? (1u << 30) : dataInLength - done;
        int written = 0;
        if (EVP_EncryptUpdate(cryptorRef->context, (unsigned char *)dataOut + done, &written,
                              (const unsigned char *)dataIn + done, (int)piece) != 1) return kCCParamError;
        done += piece;
    }
    if (dataOutMoved) *dataOutMoved = done;
    return kCCSuccess;
}

CCCryptorStatus CCCryptorRelease(CCCryptorRef cryptorRef) {
    if (cryptorRef) { EVP_CIPHER_CTX_free(cryptorRef->context); free(cryptorRef); }
    return kCCSuccess;
}
