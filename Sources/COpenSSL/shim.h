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

/* Macros Swift cannot import (they expand to other macros): exposed as constants. */
static inline int silentshard_evp_pkey_keypair(void) { return EVP_PKEY_KEYPAIR; }
static inline int silentshard_evp_pkey_public_key(void) { return EVP_PKEY_PUBLIC_KEY; }
#endif
