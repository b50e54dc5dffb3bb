#ifndef SILENTSHARD_CSOCKETSHIMS_H
#define SILENTSHARD_CSOCKETSHIMS_H
/* Linux APIs the Glibc module does not export, for the WebSocket transport's I/O threads. */
#ifdef __linux__
#include <sys/eventfd.h>
static inline int silentshard_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
#endif
#endif
