/* sysprobe makes one syscall the way an attacker in a jail would, and says
 * what came back: "NAME: ok" or "NAME: errno NAME (N)". Built static by the
 * test suite (script_test.go) and bound into jails, so that a seccomp rule
 * can be shown to hold by a call that would otherwise succeed or fail
 * differently.
 *
 *   sysprobe mount | unshare-user | clone-newuser | clone3 | keyctl | ...
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/sched.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

extern char **environ;

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

static long report(const char *name, long r)
{
	if (r < 0)
		printf("%s: errno %s (%d)\n", name, strerrorname_np(errno) ? strerrorname_np(errno) : "?", errno);
	else
		printf("%s: ok\n", name);
	fflush(stdout);
	return r;
}

static void *thread_fn(void *arg) { return arg; }

/* probe runs the named call; it returns 0 when the name is known. */
static int probe(const char *n)
{
	char buf[64];
	if (!strcmp(n, "mount"))
		report(n, syscall(SYS_mount, "none", "/tmp", "tmpfs", 0, NULL));
	else if (!strcmp(n, "umount2"))
		report(n, syscall(SYS_umount2, "/tmp", 0));
	else if (!strcmp(n, "fsopen"))
		report(n, syscall(SYS_fsopen, "tmpfs", 0));
	else if (!strcmp(n, "open_tree"))
		report(n, syscall(SYS_open_tree, AT_FDCWD, "/tmp", 1 /* OPEN_TREE_CLONE */));
	else if (!strcmp(n, "move_mount"))
		report(n, syscall(SYS_move_mount, AT_FDCWD, "/tmp", AT_FDCWD, "/tmp", 0));
	else if (!strcmp(n, "mount_setattr"))
		report(n, syscall(SYS_mount_setattr, AT_FDCWD, "/tmp", 0, NULL, 0));
	else if (!strcmp(n, "pivot_root"))
		report(n, syscall(SYS_pivot_root, "/tmp", "/tmp"));
	else if (!strcmp(n, "chroot"))
		report(n, syscall(SYS_chroot, "/tmp"));
	else if (!strcmp(n, "unshare-user"))
		report(n, syscall(SYS_unshare, CLONE_NEWUSER));
	else if (!strcmp(n, "unshare-net"))
		report(n, syscall(SYS_unshare, CLONE_NEWNET));
	else if (!strcmp(n, "setns"))
		report(n, syscall(SYS_setns, open("/proc/self/ns/uts", O_RDONLY), 0));
	else if (!strcmp(n, "clone-newuser") || !strcmp(n, "clone-newns") || !strcmp(n, "clone-newnet")) {
		unsigned long fl = !strcmp(n, "clone-newuser") ? CLONE_NEWUSER : !strcmp(n, "clone-newns") ? CLONE_NEWNS : CLONE_NEWNET;
		long r = syscall(SYS_clone, fl | SIGCHLD, 0, 0, 0, 0);
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		report(n, r);
	} else if (!strcmp(n, "clone3")) {
		struct clone_args a = {.exit_signal = SIGCHLD};
		long r = syscall(SYS_clone3, &a, sizeof a);
		if (r == 0)
			_exit(0);
		if (r > 0)
			waitpid((pid_t)r, NULL, 0);
		report(n, r);
	} else if (!strcmp(n, "fork")) {
		pid_t p = fork();
		if (p == 0)
			_exit(7);
		int st = 0;
		waitpid(p, &st, 0);
		report(n, p > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 7 ? 0 : -1);
	} else if (!strcmp(n, "thread")) {
		pthread_t t;
		int r = pthread_create(&t, NULL, thread_fn, NULL);
		if (r == 0)
			pthread_join(t, NULL);
		errno = r;
		report(n, r ? -1 : 0);
	} else if (!strcmp(n, "posix_spawn")) {
		pid_t p;
		char *argv[] = {"true", NULL};
		int r = posix_spawn(&p, "/bin/true", NULL, NULL, argv, environ);
		int st = 0;
		if (r == 0)
			waitpid(p, &st, 0);
		errno = r;
		report(n, r ? -1 : 0);
	} else if (!strcmp(n, "sched-idle-pid1") || !strcmp(n, "sched-idle-self")) {
		struct sched_param sp = {0};
		report(n, sched_setscheduler(!strcmp(n, "sched-idle-pid1") ? 1 : 0, SCHED_IDLE, &sp));
	} else if (!strcmp(n, "sched-idle-pid1-hi")) {
		/* pid 1 with bits the kernel drops (it reads an int) */
		struct sched_param sp = {0};
		report(n, syscall(SYS_sched_setscheduler, 0x100000001L, SCHED_IDLE, &sp));
	} else if (!strcmp(n, "rt-self")) {
		struct sched_param sp = {.sched_priority = 10};
		report(n, sched_setscheduler(0, SCHED_FIFO, &sp));
	} else if (!strcmp(n, "nice-pid1"))
		report(n, setpriority(PRIO_PROCESS, 1, 19));
	else if (!strcmp(n, "nice-pid1-hi"))
		report(n, syscall(SYS_setpriority, 0x100000000L | PRIO_PROCESS, 0x100000001L, 19));
	else if (!strcmp(n, "nice-user"))
		report(n, setpriority(PRIO_USER, getuid(), 19));
	else if (!strcmp(n, "nice-user-hi"))
		report(n, syscall(SYS_setpriority, 0x100000000L | PRIO_USER, (long)getuid(), 19));
	else if (!strcmp(n, "nice-self"))
		report(n, setpriority(PRIO_PROCESS, 0, 19));
	else if (!strcmp(n, "keyctl"))
		report(n, syscall(SYS_keyctl, 0 /* GET_KEYRING_ID */, -3 /* session */, 0));
	else if (!strcmp(n, "add_key"))
		report(n, syscall(SYS_add_key, "user", "probe", "x", 1, -3));
	else if (!strcmp(n, "request_key"))
		report(n, syscall(SYS_request_key, "user", "probe", NULL, 0));
	else if (!strcmp(n, "bpf"))
		report(n, syscall(SYS_bpf, 0, NULL, 0));
	else if (!strcmp(n, "perf_event_open"))
		report(n, syscall(SYS_perf_event_open, NULL, 0, -1, -1, 0));
	else if (!strcmp(n, "userfaultfd"))
		report(n, syscall(SYS_userfaultfd, 0));
	else if (!strcmp(n, "io_uring_setup"))
		report(n, syscall(SYS_io_uring_setup, 1, NULL));
	else if (!strcmp(n, "kexec_load"))
		report(n, syscall(SYS_kexec_load, 0, 0, NULL, 0));
	else if (!strcmp(n, "init_module"))
		report(n, syscall(SYS_init_module, NULL, 0, ""));
	else if (!strcmp(n, "finit_module"))
		report(n, syscall(SYS_finit_module, -1, "", 0));
	else if (!strcmp(n, "delete_module"))
		report(n, syscall(SYS_delete_module, "probe", 0));
	else if (!strcmp(n, "reboot"))
		report(n, syscall(SYS_reboot, 0, 0, 0, NULL));
	else if (!strcmp(n, "swapon"))
		report(n, syscall(SYS_swapon, "/tmp/none", 0));
	else if (!strcmp(n, "swapoff"))
		report(n, syscall(SYS_swapoff, "/tmp/none"));
	else if (!strcmp(n, "settimeofday"))
		report(n, syscall(SYS_settimeofday, NULL, NULL));
	else if (!strcmp(n, "clock_settime")) {
		struct timespec ts = {0};
		report(n, syscall(SYS_clock_settime, CLOCK_REALTIME, &ts));
	} else if (!strcmp(n, "acct"))
		report(n, syscall(SYS_acct, NULL));
	else if (!strcmp(n, "quotactl"))
		report(n, syscall(SYS_quotactl, 0, "/", 0, NULL));
	else if (!strcmp(n, "open_by_handle_at"))
		report(n, syscall(SYS_open_by_handle_at, AT_FDCWD, NULL, 0));
	else if (!strcmp(n, "personality-query"))
		report(n, syscall(SYS_personality, 0xffffffffUL));
	else if (!strcmp(n, "personality-linux"))
		report(n, syscall(SYS_personality, 0UL));
	else if (!strcmp(n, "personality-bad"))
		report(n, syscall(SYS_personality, 0x0200000UL /* READ_IMPLIES_EXEC */));
	else if (!strcmp(n, "socket-alg"))
		report(n, syscall(SYS_socket, AF_ALG, SOCK_SEQPACKET, 0));
	else if (!strcmp(n, "socket-vsock"))
		report(n, syscall(SYS_socket, AF_VSOCK, SOCK_STREAM, 0));
	else if (!strcmp(n, "socket-unix"))
		report(n, syscall(SYS_socket, AF_UNIX, SOCK_STREAM, 0));
	else if (!strcmp(n, "ptrace"))
		report(n, syscall(SYS_ptrace, 16 /* PTRACE_ATTACH */, 1, 0, 0));
	else if (!strcmp(n, "process_vm_readv"))
		report(n, syscall(SYS_process_vm_readv, 1, NULL, 0, NULL, 0, 0));
	else if (!strcmp(n, "chmod-suid") || !strcmp(n, "chmod-sgid") || !strcmp(n, "chmod-plain")) {
		snprintf(buf, sizeof buf, "/tmp/probe-%d", getpid());
		close(open(buf, O_CREAT | O_WRONLY, 0755));
		mode_t m = !strcmp(n, "chmod-suid") ? 04755 : !strcmp(n, "chmod-sgid") ? 02755 : 0700;
		report(n, syscall(SYS_chmod, buf, m));
	} else if (!strcmp(n, "ioctl-tiocsti")) {
		/* On the jail's own pty, taken as controlling tty. */
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		grantpt(m);
		unlockpt(m);
		int s = open(ptsname(m), O_RDWR);
		setsid();
		ioctl(s, TIOCSCTTY, 0);
		char c = 'x';
		long r = syscall(SYS_ioctl, s, TIOCSTI, &c);
		report(n, r);
		/* Anything injected would be readable on the slave now. */
		fcntl(s, F_SETFL, O_NONBLOCK);
		printf("injected bytes: %zd\n", read(s, buf, sizeof buf) > 0 ? (ssize_t)1 : (ssize_t)0);
	} else if (!strcmp(n, "ioctl-tiocsti-stdin")) {
		/* On fd 0 as it is: in tty mode the jail's pty, the command's
		 * controlling terminal, relayed to the caller's. */
		char c = 'x';
		report(n, syscall(SYS_ioctl, 0, TIOCSTI, &c));
	} else if (!strcmp(n, "ioctl-tiocsti-high")) {
		/* The same request with high bits set: the kernel ignores them. */
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		grantpt(m);
		unlockpt(m);
		int s = open(ptsname(m), O_RDWR);
		setsid();
		ioctl(s, TIOCSCTTY, 0);
		char c = 'x';
		report(n, syscall(SYS_ioctl, s, 0x100000000UL | TIOCSTI, &c));
	} else if (!strcmp(n, "ioctl-tioclinux")) {
		/* TIOCLINUX (0x541C) on the jail's pty; 12 = TIOCL_GETSHIFTSTATE. */
		int m = posix_openpt(O_RDWR | O_NOCTTY);
		char sub = 12;
		report(n, syscall(SYS_ioctl, m, 0x541C, &sub));
	} else if (!strcmp(n, "ioctl-tcgets")) {
		/* An ordinary ioctl: on /dev/null the kernel answers ENOTTY. */
		int fd = open("/dev/null", O_RDONLY);
		report(n, syscall(SYS_ioctl, fd, TCGETS, buf));
	} else if (!strcmp(n, "open-suid")) {
		/* A new file made setuid by open's mode, not by chmod. */
		report(n, syscall(SYS_open, "/tmp/sysprobe-suid", O_CREAT | O_WRONLY, 04755));
	} else if (!strcmp(n, "openat-sgid")) {
		report(n, syscall(SYS_openat, AT_FDCWD, "/tmp/sysprobe-sgid", O_CREAT | O_WRONLY, 02755));
	} else if (!strcmp(n, "openat-plain")) {
		report(n, syscall(SYS_openat, AT_FDCWD, "/tmp/sysprobe-plain", O_CREAT | O_WRONLY, 0644));
	} else if (!strcmp(n, "openat2"))
		report(n, syscall(SYS_openat2, AT_FDCWD, "/", NULL, 0));
	else if (!strcmp(n, "name_to_handle_at"))
		report(n, syscall(SYS_name_to_handle_at, AT_FDCWD, "/", NULL, NULL, 0));
	else if (!strcmp(n, "modify_ldt"))
		report(n, syscall(SYS_modify_ldt, 0, buf, 16));
	else if (!strcmp(n, "set_mempolicy"))
		report(n, syscall(SYS_set_mempolicy, 0, NULL, 0));
	else if (!strcmp(n, "sysfs"))
		report(n, syscall(SYS_sysfs, 3));
	else if (!strcmp(n, "iopl"))
		report(n, syscall(SYS_iopl, 3));
	else if (!strcmp(n, "ioperm"))
		report(n, syscall(SYS_ioperm, 0x80, 1, 1));
	else if (!strcmp(n, "syslog"))
		report(n, syscall(SYS_syslog, 10, NULL, 0)); /* SYSLOG_ACTION_SIZE_BUFFER */
	else if (!strcmp(n, "sethostname"))
		report(n, syscall(SYS_sethostname, "x", 1));
	else if (!strcmp(n, "vhangup"))
		report(n, syscall(SYS_vhangup));
	else if (!strcmp(n, "fanotify_init"))
		report(n, syscall(SYS_fanotify_init, 0, 0));
	else if (!strcmp(n, "kcmp"))
		report(n, syscall(SYS_kcmp, getpid(), getpid(), 0, 0, 0));
	else if (!strcmp(n, "pidfd_getfd")) {
		int pfd = (int)syscall(SYS_pidfd_open, getpid(), 0);
		report(n, syscall(SYS_pidfd_getfd, pfd, 1, 0));
	} else if (!strcmp(n, "x32")) {
		/* getpid (39) through the x32 ABI: the same entry, bit 30 set. */
		report(n, syscall(0x40000000 | 39));
	} else if (!strcmp(n, "file_getattr")) {
		/* Linux 6.17's file_getattr, by number (468 on x86_64 and
		 * arm64 alike): newer than libseccomp's syscall table. */
		report(n, syscall(468, -1, "", NULL, 0, 0));
	} else if (!strcmp(n, "int80")) {
		/* getpid through the i386 ABI: a foreign ABI is killed. */
		long r;
		__asm__ volatile("int $0x80" : "=a"(r) : "a"(20) : "memory");
		report(n, r < 0 ? (errno = (int)-r, -1) : r);
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: sysprobe NAME...\n");
		return 2;
	}
	for (int i = 1; i < argc; i++)
		if (probe(argv[i]) < 0) {
			fprintf(stderr, "sysprobe: unknown probe %s\n", argv[i]);
			return 2;
		}
	return 0;
}
