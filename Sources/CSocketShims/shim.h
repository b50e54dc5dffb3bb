#ifndef SILENTSHARD_CSOCKETSHIMS_H
#define SILENTSHARD_CSOCKETSHIMS_H
/* Linux APIs the Glibc module does not export: the WebSocket transport's I/O threads, the bench's CPU pinning. */
#ifdef __linux__
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
static inline int silentshard_eventfd_nonblocking(void) { return eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC); }
/* Names the calling thread (the kernel keeps at most 15 bytes; longer names are truncated). */
static inline int silentshard_name_this_thread(const char *name) { return prctl(PR_SET_NAME, name, 0, 0, 0); }
/* Restricts one thread (a task id from /proc/<pid>/task) to CPUs first ..< first + count; threads it
   creates later inherit that. */
static inline int silentshard_set_task_cpus(int task, int first, int count) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int cpu = first; cpu < first + count && cpu < CPU_SETSIZE; cpu++) CPU_SET(cpu, &set);
    return sched_setaffinity(task, sizeof(set), &set);
}
#endif
#endif
