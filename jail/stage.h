/* The init stage's contract with the runner that starts it (stagestart.c's
 * stage_spawn, runner.c): which fds carry what, the flags of the plan's
 * process section, and what PID 1 reports. The init stage, PID 1 and the
 * command's process before its exec are C (init.c, pid1.c, exec.c), a
 * fork of the runner with no exec between, before any Go runtime:
 * unshare(CLONE_NEWUSER) needs a process of one thread, and a jail pays
 * for one Go start (the planner's, and none on a cached plan), not two. */
#ifndef JAIL_STAGE_H
#define JAIL_STAGE_H

#include <signal.h>
#include <stdint.h>
#include <sys/types.h>

#include "internal/wire/err.h"
#include "jail/runplan.h"

/* The stage entry: the runner sets this variable when it re-executes
 * /proc/self/exe as another stage (entry.c lists every stage). */
#define JAIL_STAGE_ENV "_JAIL_STAGE="
/* The run stage's hand-over memfd, by fd number (jail/run.go sets it): the
 * variable's name, for getenv (JAIL_STAGE_ENV is "name=", for an envp). */
#define JAIL_RUNPLAN_VAR "_JAIL_RUNPLAN"

/* Fds the runner passes, from 3 up. */
#define FD_PLAN 3   /* read: u32 length, the plan and its tail, 'C' (runplan.h); then the signals jail passes on, a byte each, until it dies */
#define FD_ERR 4    /* write: one error line, or EOF when the command was exec'd */
#define FD_STATUS 5 /* write: the command's status record */
#define FD_SYNC 6   /* write: 'U' once the user namespace exists, then PID 1's pid (u32) */
#define FD_NOTIFY 7 /* a unix socket: the seccomp listener goes to the runner through it */
#define FD_NET 8    /* a unix socket: the network's sockets (netns.c: net_prepare, net_send) go to the runner through it */
#define FD_WATCH 9  /* the runner's /proc/PID/stat: PID 1 stops the jail while jail is stopped */
#define FD_FREEZE 10 /* v2: the run's cgroup.freeze, which PID 1 stops it with; else /dev/null */
#define FD_TTY 11   /* tty mode: a unix socket, the pty's master goes to the runner through it (ptyinside.c); else /dev/null */
#define FD_TREES 12 /* the mount trees the runner cloned, if any */
#define FD_NFIXED (FD_TREES - FD_PLAN) /* the fds before the trees */

/* Flags of the process section. */
#define PROC_NEW_SESSION 1u
#define PROC_DROP_GROUPS 2u /* the caller is root: drop supplementary groups */
#define PROC_HOST_NET 4u    /* network = "host": no network namespace of its own */
#define PROC_ALLOWLIST 8u   /* network = "allowlist": jail's proxy listens in the jail */
/* session_keyring = "best-effort": where a seccomp filter outside jail
 * refuses keyctl, PID 1 goes on in the caller's session keyring */
#define PROC_KEYRING_BEST_EFFORT 16u
/* --tty: the command runs on a pty of the jail's own (pty.c, ptyinside.c);
 * PROC_TTY_AUTO: when jail's stdin and stdout are terminals, which the
 * runner decides at run time (a cached plan serves both); neither: never. */
#define PROC_TTY_ON 32u
#define PROC_TTY_AUTO 64u
/* An allowlist entry names an IP address: a connection to it must work
 * from the first packet, so the TUN device is made at the start, not on
 * the network's first use (tun.c). */
#define PROC_TUN_EAGER 128u

/* The allowlist proxy's ports on the jail's 127.0.0.1 (its own network
 * namespace: nothing else is there), and the resolver's, which
 * /etc/resolv.conf names. */
#define PROXY_HTTP_PORT 3128
#define PROXY_SOCKS_PORT 1080
#define RESOLVER_PORT 53

/* What PID 1 hands the runner on FD_NET, in this order: the resolver's
 * UDP socket and TCP listener (every mode but host: NET_DNS_FDS of them),
 * then, for the allowlist, the proxy's two listeners and /dev/net/tun
 * (NET_EAGER_FDS: with PROC_TUN_EAGER, the device made and configured).
 * Without PROC_TUN_EAGER the device is made on the network's first use
 * (tap.c), and these follow: a netlink socket of the jail's namespace,
 * which the runner makes the device with, and the taps, raw sockets that
 * catch what is sent to an address before the device exists (IPv4 TCP
 * and UDP, then IPv6's when the kernel has it: NET_NFDS, or two fewer).
 * The helper gets them all but the netlink socket, in the same order. */
enum {
	NET_DNS_UDP,
	NET_DNS_TCP,
	NET_HTTP,
	NET_SOCKS,
	NET_TUN,
	NET_RTNL,
	NET_TAP_TCP4,
	NET_TAP_UDP4,
	NET_TAP_TCP6,
	NET_TAP_UDP6,
	NET_NFDS
};
#define NET_DNS_FDS 2
#define NET_EAGER_FDS (NET_TUN + 1)

/* The allowlist's TUN device in the jail (tun.c). Its MTU is large: TCP
 * ends in jail's stack, a hop away, and the MTU sets its throughput. */
#define TUN_NAME "jail0"
#define TUN_MTU 65520

/* The status record PID 1 writes on FD_STATUS when the command is gone;
 * before it, with a disk limit, a WRITTEN_MAGIC record each time what PID
 * 1 counts changed: the bytes the processes it reaped wrote (its
 * /proc/PID/io, which an unprivileged runner may not read: PID 1 is not
 * dumpable and never exec'd). */
#define STATUS_MAGIC 0x444e454au  /* "JEND" */
#define WRITTEN_MAGIC 0x5452574au /* "JWRT" */
struct status_record {
	uint32_t magic;
	int32_t exited;   /* 1: code is the exit status; 0: code is the signal */
	int32_t code;
	int32_t reserved;
	uint64_t written; /* PID 1's write_bytes, when it counts (else 0) */
};

/* init_stage is the init stage (init.c): it builds the jail and becomes
 * its PID 1, or reports why not and returns the exit status. */
int init_stage(void);

/* stage_error sends the one-line error on FD_ERR, for the runner to print;
 * its first byte is the kind (internal/wire/err.h). */
void stage_error(const struct jerr *e);

/* pid1_run is the jail's PID 1 after the command is started (count: it
 * reports what it counts of the disk limit, WRITTEN_MAGIC): it reaps,
 * forwards signals to the command (the terminal's to its process group),
 * stops the whole jail while jail is stopped, reports the command's status
 * and exits, which kills whatever the command left behind. It never
 * returns. */
void pid1_run(pid_t command, int count) __attribute__((noreturn));

/* pid1_signals is what jail passes on to the command: the runner blocks
 * them, reads them from a signalfd, and sends each, a byte, on the plan
 * pipe after the plan (signals would merge with one of the same number
 * the jail keeps pending at its PID 1); PID 1 passes them on. */
void pid1_signals(sigset_t *set);

/* close_fds_from closes every fd from lo up except the nkeep in keep
 * (ascending): close_range, or a walk of /proc/self/fd, or one close per
 * possible fd. It fails rather than let an fd through. */
int close_fds_from(int lo, const int *keep, int nkeep);

/* loopback_up brings up lo in the jail's fresh network namespace, so
 * servers on 127.0.0.1 work inside (netns.c). */
int loopback_up(struct jerr *e);

/* net_prepare, in the init stage, makes the resolver's sockets on the
 * jail's 127.0.0.1:53 and, for the allowlist (flags PROC_ALLOWLIST), the
 * proxy's listeners, /dev/net/tun (tun_open) and either, with
 * PROC_TUN_EAGER, the device (tun_make) or what makes it later (the
 * netlink socket and the taps: taps_open), into fds in the NET_* order,
 * *n of them; or says why not, with none left open. */
int net_prepare(uint32_t flags, int *fds, int *n, struct jerr *e);

/* net_send, in PID 1, sends them over sock to the runner, which serves
 * them from the host's side; net_close_all closes them. */
int net_send(int sock, const int *fds, int n, struct jerr *e);
void net_close_all(const int *fds, int n);

/* tun_open opens /dev/net/tun, in the init stage, in the jail's network
 * namespace and before it takes the command's ids; or says why not, with
 * the fix (tun.c). */
int tun_open(struct jerr *e);

/* tun_make makes tun (/dev/net/tun, opened in the jail's namespace) the
 * persistent TUN device TUN_NAME with default routes from the jail's
 * addresses (IPv6 too when v6: the kernel has it), by netlink on rtnl, a
 * NETLINK_ROUTE socket of that namespace; tapped, it also removes the
 * catch-all routes taps_open added. In the init stage, or in the runner
 * on the network's first use: the owner of the jail's user namespace may
 * configure its network from outside. */
int tun_make(int tun, int rtnl, int v6, int tapped, struct jerr *e);

/* tun_addrs, in the init stage, gives the jail's lo its own addresses
 * (not loopback), which the device's routes name as their source, by
 * netlink on rtnl (tun.c says why on lo): IPv6's when *v6, which it
 * clears when the namespace's devices have IPv6 turned off. */
int tun_addrs(int rtnl, int *v6, struct jerr *e);

/* The jail's own addresses (tun.c says why on lo). */
extern const unsigned char jail_v4[4], jail_v6[16];

/* taps_open, in the init stage, routes every address but loopback to
 * the jail's own lo (RTN_LOCAL: a connection is reset at once, a datagram
 * answered port unreachable) by netlink on rtnl, and opens the raw
 * sockets that see those packets (NET_TAP_*, from taps[0]): the first
 * wakes the runner, and the helper records them as refused. *n is how
 * many: 4, or 2 without IPv6. */
int taps_open(int rtnl, int v6, int *taps, int *n, struct jerr *e);

/* pty_open, in PID 1 in tty mode once the root is built, opens a new pty
 * in the jail's own devpts (its /dev/pts/ptmx, checked to be one), sized
 * as the caller's terminal (ws), hands its master to the runner on FD_TTY
 * and its slave to the command's process on go (pty_send); -1 with *e
 * saying why (ptyinside.c). */
int pty_open(const struct forwarded *f, int go, struct jerr *e);

/* pty_take, in the command's process in tty mode, makes a session of its
 * own whose controlling terminal is the slave PID 1 sends on FD_GO, and
 * puts it on fds 0, 1 and 2. */
int pty_take(struct jerr *e);

/* FD_GO is, in the command's process, the socket PID 1 says "the root is
 * built" on (one byte; EOF: setup failed). FD_SYNC's number: PID 1 closed
 * that before forking the command. */
#define FD_GO FD_SYNC

/* command_exec is the command's side of the fork, forked by PID 1 before
 * it builds the root: the process limits and the last privileges dropped,
 * the seccomp filter loaded (the kernel's work there overlaps PID 1's),
 * then, once FD_GO says the root is built, the working directory and
 * exec. It never returns. */
void command_exec(const struct forwarded *f) __attribute__((noreturn));

#endif
