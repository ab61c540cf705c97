/* The jail's PID 1 once the command runs: reap every orphan, pass the
 * caller's SIGINT/SIGTERM/SIGHUP/SIGQUIT on to the command, and when the
 * command is gone report its status and exit. PID 1 exiting ends the pid
 * namespace, so the kernel kills everything the command left behind. */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/capability.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "jail/stage.h"

/* drop_all leaves PID 1 with no capabilities: it only waits and signals its
 * own children, which needs none. */
static void drop_all(void)
{
	for (int cap = 0; cap <= 63; cap++)
		prctl(PR_CAPBSET_DROP, cap, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct data[2] = {{0}};
	syscall(SYS_capset, &hdr, data);
}

static void finish(int wstatus) __attribute__((noreturn));

static void finish(int wstatus)
{
	struct status_record st = {.magic = PLAN_MAGIC};
	if (WIFEXITED(wstatus)) {
		st.exited = 1;
		st.code = WEXITSTATUS(wstatus);
	} else {
		st.code = WTERMSIG(wstatus);
	}
	ssize_t w = write(FD_STATUS, &st, sizeof st);
	(void)w;
	_exit(0);
}

void pid1_run(pid_t command)
{
	drop_all();
	sigset_t mask;
	sigprocmask(SIG_BLOCK, NULL, &mask);
	int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
	if (sfd < 0)
		_exit(125);
	struct pollfd fds[2] = {{.fd = sfd, .events = POLLIN}, {.fd = FD_PLAN, .events = POLLIN}};
	for (;;) {
		if (poll(fds, 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			_exit(125);
		}
		/* The parent holds the plan pipe open while it lives: when it
		 * closes, jail is gone and so is the jail. */
		if (fds[1].revents)
			_exit(125);
		struct signalfd_siginfo si;
		if (read(sfd, &si, sizeof si) != sizeof si)
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(command, (int)si.ssi_signo);
			continue;
		}
		int ws;
		pid_t pid;
		while ((pid = waitpid(-1, &ws, WNOHANG)) > 0)
			if (pid == command)
				finish(ws);
	}
}
