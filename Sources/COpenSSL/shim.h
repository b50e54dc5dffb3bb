#ifndef SILENTSHARD_COPENSSL_SHIM_H
#define SILENTSHARD_COPENSSL_SHIM_H
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/core_names.h>
#include <openssl/param_build.h>
#include <openssl/params.h>
#include <openssl/ec.h>
#include <openssl/ecdsa.h>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/rand.h>
#include <openssl/obj_mac.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <openssl/sha.h>

/* Macros Swift cannot import (they expand to other macros): exposed as constants. */
static inline int silentshard_evp_pkey_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int silentshard_evp_pkey_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }

/* TLS client helpers for the WebSocket/HTTP transport: these are macros over SSL_ctrl/SSL_CTX_ctrl. */
static inline int silentshard_ssl_set_sni(SSL *ssl, const char *name) { return (int)SSL_set_tlsext_host_name(ssl, name); }
static inline long silentshard_ssl_ctx_set_transport_modes(SSL_CTX *ctx) {
    return SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}
static inline int silentshard_ssl_ctx_set_min_tls12(SSL_CTX *ctx) { return (int)SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION); }

/* Low-level SHA-256/512 for the OT extension's hot loops (MPCCrypto.SHA2Context): a plain C state that
 * can be copied (midstates), no EVP dispatch and no allocation per digest. Deprecated in OpenSSL 3 but
 * exported; the deprecation stays inside these wrappers. */
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wdeprecated-declarations"
static inline size_t silentshard_sha256_state_size(void) { return sizeof(SHA256_CTX); }
static inline size_t silentshard_sha512_state_size(void) { return sizeof(SHA512_CTX); }
static inline void silentshard_sha256_init(void *c) { SHA256_Init((SHA256_CTX *)c); }
static inline void silentshard_sha256_update(void *c, const void *data, size_t count) { SHA256_Update((SHA256_CTX *)c, data, count); }
static inline void silentshard_sha256_final(void *c, unsigned char *out) { SHA256_Final(out, (SHA256_CTX *)c); }
static inline void silentshard_sha512_init(void *c) { SHA512_Init((SHA512_CTX *)c); }
static inline void silentshard_sha512_update(void *c, const void *data, size_t count) { SHA512_Update((SHA512_CTX *)c, data, count); }
static inline void silentshard_sha512_final(void *c, unsigned char *out) { SHA512_Final(out, (SHA512_CTX *)c); }
#pragma clang diagnostic pop
#endif
