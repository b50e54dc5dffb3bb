#ifndef SILENTSHARD_CPOSTGRES_SHIM_H
#define SILENTSHARD_CPOSTGRES_SHIM_H
/* libpq, the PostgreSQL client library (pkg-config libpq; Debian: libpq-dev). */
#include <libpq-fe.h>
#endif
