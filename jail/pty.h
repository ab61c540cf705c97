/* The interactive mode, the runner's side (pty.c): the caller's terminal
 * in raw mode, relayed to and from a pty of the jail's own, whose master
 * PID 1 hands over (ptyinside.c), and restored on every way out. */
#ifndef JAIL_PTY_H
#define JAIL_PTY_H

#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>

struct runner;

struct pty {
	int on;          /* this run has a pty (pty_choose) */
	int sock;        /* FD_TTY's runner end, where the master comes; -1 once taken or gone */
	int master;      /* the master, written what the caller types; -1 before it comes and once done */
	int slave;       /* a slave, held until the jail is over: the master reads EIO only then, not whenever
			    the jail has no slave open (a command that put its stdio elsewhere); -1 after */
	int in;          /* the caller's terminal, read; -1 at its end */
	size_t off, len; /* what was typed and waits for the master to take it */
	char buf[4096];
};

/* pty_jail_over lets go of the runner's slave once the jail is over, so
 * the master reads EIO when the pty is drained. */
void pty_jail_over(struct runner *r);

/* pty_choose decides, when the run starts, whether it has a pty: the
 * plan's --tty, or its auto mode with jail's stdin and stdout both
 * terminals and jail in their foreground. --tty without them ends the run
 * (125, one line). It saves the caller's terminal's modes, for
 * tty_restore, and has the signals that would end jail restore them
 * first. */
void pty_choose(struct runner *r);

/* pty_size is the caller's terminal's size for the init stage (the pty's
 * first size, set before the command starts), or NULL without a pty. */
const struct winsize *pty_size(const struct runner *r, struct winsize *ws);

/* pty_socket makes the pair the master comes on: *child is the init
 * stage's end (FD_TTY), /dev/null without a pty; 0, or -1 with errno. */
int pty_socket(struct runner *r, int *child);

/* pty_fds is what to wait for: *sock the master's coming, *io the
 * caller's typing, or the master taking what was typed. */
void pty_fds(const struct runner *r, struct pollfd *sock, struct pollfd *io);

/* on_pty_master takes the master from PID 1: sized as the caller's
 * terminal again, relayed to jail's stdout through the output cap
 * (relay.c), and the caller's terminal in raw mode. */
void on_pty_master(struct runner *r, short revents);

/* on_pty_io passes what the caller types on to the master, unchanged (^C
 * and ^Z are bytes, which the jail's pty makes signals of). */
void on_pty_io(struct runner *r, short revents);

/* pty_output_done ends the pty's side once the master's output is over
 * (the jail's last holder of the slave is gone): the caller's terminal is
 * restored, before what jail says last. */
void pty_output_done(struct runner *r);

/* pty_resize, on SIGWINCH, sets the caller's terminal's size on the
 * master, and the kernel tells the jail's foreground process group; 1
 * when it did (a run with a pty), 0 when the signal is to be passed on. */
int pty_resize(struct runner *r);

/* pty_suspend gives the caller's terminal its own modes back as jail
 * stops (^Z, SIGTSTP); pty_resume puts it in raw mode again once jail
 * runs again in its foreground, and takes its size, changed meanwhile. */
void pty_suspend(void);
void pty_resume(struct runner *r);

/* tty_restore gives the caller's terminal the modes it had when jail
 * started, if jail changed them: finish calls it before jail's last line.
 * Async-signal-safe. */
void tty_restore(void);

#endif
