#ifndef SILENTSHARD_CSECP256K1_SHIM_H
#define SILENTSHARD_CSECP256K1_SHIM_H
#include <secp256k1.h>
#include <secp256k1_ecdh.h>
#include <secp256k1_recovery.h>
#include <secp256k1_extrakeys.h>
#include <secp256k1_schnorrsig.h>

/* Flag macros Swift cannot import (they expand to other macros), exposed as constants. */
static inline unsigned int silentshard_secp256k1_context_none(void) { return SECP256K1_CONTEXT_NONE; }
static inline unsigned int silentshard_secp256k1_ec_compressed(void) { return SECP256K1_EC_COMPRESSED; }
static inline unsigned int silentshard_secp256k1_ec_uncompressed(void) { return SECP256K1_EC_UNCOMPRESSED; }
#endif
