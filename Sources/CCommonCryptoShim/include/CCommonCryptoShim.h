/*
 * CCommonCryptoShim — a Linux test double of exactly the CommonCrypto functions MPCCrypto's CommonCrypto backend
 * calls (Backend/CommonCrypto), declared with Apple's C signatures and constants (CommonDigest.h, CommonHMAC.h,
 * CommonCryptor.h) and implemented over OpenSSL, so that backend compiles and runs MPCCryptoTests' known answers
 * on Linux CI (issue 19). Only in the package when SILENTSHARD_COMMONCRYPTO_SHIM=1 (scripts/check-commoncrypto-backend);
 * never linked into a product.
 *
 * The context structs keep Apple's names but not their fields: the backend never reads fields (it only passes
 * pointers and copies whole structs), so an opaque buffer large enough for OpenSSL's state is API-identical.
 */
#ifndef SILENTSHARD_CCOMMONCRYPTO_SHIM_H
#define SILENTSHARD_CCOMMONCRYPTO_SHIM_H
#include <stddef.h>
#include <stdint.h>

typedef uint32_t CC_LONG;
#define CC_SHA256_DIGEST_LENGTH 32
#define CC_SHA512_DIGEST_LENGTH 64
typedef struct CC_SHA256state_st { uint64_t opaque[16]; } CC_SHA256_CTX;
typedef struct CC_SHA512state_st { uint64_t opaque[32]; } CC_SHA512_CTX;
int CC_SHA256_Init(CC_SHA256_CTX *c);
int CC_SHA256_Update(CC_SHA256_CTX *c, const void *data, CC_LONG len);
int CC_SHA256_Final(unsigned char *md, CC_SHA256_CTX *c);
int CC_SHA512_Init(CC_SHA512_CTX *c);
int CC_SHA512_Update(CC_SHA512_CTX *c, const void *data, CC_LONG len);
int CC_SHA512_Final(unsigned char *md, CC_SHA512_CTX *c);

enum { kCCHmacAlgSHA1, kCCHmacAlgMD5, kCCHmacAlgSHA256, kCCHmacAlgSHA384, kCCHmacAlgSHA512, kCCHmacAlgSHA224 };
typedef uint32_t CCHmacAlgorithm;
void CCHmac(CCHmacAlgorithm algorithm, const void *key, size_t keyLength, const void *data, size_t dataLength, void *macOut);

enum { kCCSuccess = 0, kCCParamError = -4300, kCCBufferTooSmall = -4301, kCCMemoryFailure = -4302,
       kCCAlignmentError = -4303, kCCDecodeError = -4304, kCCUnimplemented = -4305 };
typedef int32_t CCCryptorStatus;
enum { kCCEncrypt = 0, kCCDecrypt };
typedef uint32_t CCOperation;
enum { kCCModeECB = 1, kCCModeCBC = 2, kCCModeCFB = 3, kCCModeCTR = 4, kCCModeOFB = 7, kCCModeRC4 = 9, kCCModeCFB8 = 10 };
typedef uint32_t CCMode;
enum { kCCAlgorithmAES128 = 0, kCCAlgorithmAES = 0, kCCAlgorithmDES, kCCAlgorithm3DES, kCCAlgorithmCAST,
       kCCAlgorithmRC4, kCCAlgorithmRC2, kCCAlgorithmBlowfish };
typedef uint32_t CCAlgorithm;
enum { ccNoPadding = 0, ccPKCS7Padding = 1 };
typedef uint32_t CCPadding;
enum { kCCModeOptionCTR_LE = 0x0001, kCCModeOptionCTR_BE = 0x0002 };
typedef uint32_t CCModeOptions;
typedef struct _CCCryptor *CCCryptorRef;
CCCryptorStatus CCCryptorCreateWithMode(CCOperation op, CCMode mode, CCAlgorithm alg, CCPadding padding, const void *iv,
                                        const void *key, size_t keyLength, const void *tweak, size_t tweakLength,
                                        int numRounds, CCModeOptions options, CCCryptorRef *cryptorRef);
CCCryptorStatus CCCryptorUpdate(CCCryptorRef cryptorRef, const void *dataIn, size_t dataInLength, void *dataOut,
                                size_t dataOutAvailable, size_t *dataOutMoved);
CCCryptorStatus CCCryptorRelease(CCCryptorRef cryptorRef);
#endif
