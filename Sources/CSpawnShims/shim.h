#ifndef SILENTSHARD_CSPAWNSHIMS_H
#define SILENTSHARD_CSPAWNSHIMS_H
/* What ChildProcess needs from <spawn.h> beyond the Glibc module. No _GNU_SOURCE here: with it, <spawn.h>
   pulls in a <sys/select.h> whose fd_set differs from the one other modules see (a build error). */
#ifdef __linux__
#include <spawn.h>
/* glibc >= 2.34 (declared in <spawn.h> under __USE_GNU only). */
extern int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);
/* The child closes every descriptor from `lowest` on before it runs. */
static inline int silentshard_spawn_close_from(posix_spawn_file_actions_t *actions, int lowest) {
    return posix_spawn_file_actions_addclosefrom_np(actions, lowest);
}
#endif
#endif
