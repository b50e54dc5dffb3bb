#ifndef SILENTSHARD_CSODIUM_SHIM_H
#define SILENTSHARD_CSODIUM_SHIM_H
#include <sodium.h>
#endif
