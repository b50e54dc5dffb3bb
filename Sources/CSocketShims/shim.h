#ifndef SILENTSHARD_CSOCKETSHIMS_H
#define SILENTSHARD_CSOCKETSHIMS_H
/* Linux APIs the Glibc module does not export, for the WebSocket transport's I/O threads. */
#ifdef __linux__
#include <sys/eventfd.h>
#include <sys/prctl.h>
static inline int silentshard_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
/* Names the calling thread (the kernel keeps at most 15 bytes; longer names are truncated). */
static inline int silentshard_name_this_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
#endif
#endif
