/* Starting the init stage: a fork of the runner, scrubbed, that runs
 * init_stage without an exec (stagestart.c says what it lets go of). */
#ifndef JAIL_STAGESTART_H
#define JAIL_STAGESTART_H

#include <sys/types.h>

#include "jail/runplan.h"

/* stage_spawn starts the init stage with the fds stage.h lays out and,
 * when its stdio are not the runner's, std as its stdin, stdout and
 * stderr (the output relay's pipes; /dev/null in tty mode). On
 * cgroup v2 it starts in the run's cgroup (CLONE_INTO_CGROUP): no attach,
 * and no moment outside it. p is the runner's plan, whose secrets the
 * fork wipes from its copy. */
pid_t stage_spawn(const int *fds, int nfds, const int *std, int cgroup_fd, const struct run_plan *p);

#endif
