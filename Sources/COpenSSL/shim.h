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
#endif
