#ifndef SILENTSHARD_CSQLITE_SHIM_H
#define SILENTSHARD_CSQLITE_SHIM_H
#include <sqlite3.h>

/* SQLITE_TRANSIENT is a cast of -1 to a function pointer, which Swift cannot import:
   binding with it makes SQLite copy the bytes before sqlite3_bind_* returns. */
static inline sqlite3_destructor_type csqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
