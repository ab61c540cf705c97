/* Every way the jail binary is entered, in one table. A constructor runs
 * before main and before the Go runtime: started by jail itself (the
 * _JAIL_STAGE variable), it runs the stage it is told and never returns
 * to Go, but for the proxy, which is Go's (jail/proxystage.go, before
 * main); started by a caller, it replays a cached plan for exactly this
 * invocation (a session's run too, its session opened and locked here),
 * if there is one, and otherwise returns: Go takes over and plans, and
 * comes back here as the runner, which keeps the plan for next time.
 * jail-sh (or `jail sh`), the agent's shell, is rewritten here into the
 * jail run it stands for first, and replayed the same way. Go's main
 * (main.go) tells the same modes apart for what C leaves it: jail-sh
 * (shMain), and the urfave/cli app, whose default command plans a run
 * (jail/run.go's Plan.Exec). C, because the runner and the init stage
 * must run before the Go runtime starts, and the agent's repeated calls
 * should not start it at all. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jail/monotonic.h"
#include "jail/runner.h"
#include "jail/runplan.h"
#include "jail/shhint.h"
#include "jail/signals.h"
#include "jail/stage.h"
#include "plancache/plancache.h"

/* command_after is the command: what follows the first "--" of argv. */
static char **command_after(char **argv)
{
	for (char **a = argv + 1; a && *a; a++)
		if (strcmp(*a, "--") == 0)
			return a[1] ? a + 1 : NULL;
	return NULL;
}

/* The run flags the replay needs: the last of each, as Go reads them. */
struct replay_flags {
	const char *status_to, *session;
};

static void replay_flag(void *ctx, const char *name, size_t n, const char *value)
{
	struct replay_flags *f = ctx;
	if (n == 11 && strncmp(name, "status-json", n) == 0)
		f->status_to = value;
	if (n == 7 && strncmp(name, "session", n) == 0)
		f->session = value;
}

/* jail_cli is defined by jail's own CLI (cmd_sh.go): jail-sh is a mode of
 * that binary only, and a program that links package jail through sandbox
 * keeps its own arguments, "sh" or a name of jail-sh's included. */
extern const int jail_cli __attribute__((weak));

/* sh_args are the agent's shell's own arguments, as main.go tells jail-sh
 * apart: what follows argv[0] when its base name is jail-sh, or "sh" in
 * `jail sh`; NULL for any other invocation. */
static char **sh_args(char **argv)
{
	if (!&jail_cli || !argv[0])
		return NULL;
	/* Its base name, as Go's filepath.Base: trailing slashes dropped. */
	size_t n = strlen(argv[0]);
	while (n > 1 && argv[0][n - 1] == '/')
		n--;
	size_t b = n;
	while (b > 0 && argv[0][b - 1] != '/')
		b--;
	if (n - b == 7 && strncmp(argv[0] + b, "jail-sh", 7) == 0)
		return argv + 1;
	return argv[1] && strcmp(argv[1], "sh") == 0 ? argv + 2 : NULL;
}

/* replay runs the plan cached for argv (plancache/) in the runner, and
 * returns only when there is none to replay. A session's run holds the
 * session's lock from here to the run's end, as the Go side's does. */
static void replay(char **argv, void *sh_block, uint64_t started)
{
	char **cmd = command_after(argv);
	size_t len = 0;
	const unsigned char *plan = NULL;
	struct replay_flags f = {0};
	/* An empty --status-json is the Go side's to refuse (the key leaves
	 * the flag out, so a plan may be cached). */
	if (!cmd || plancache_args(argv, replay_flag, &f) < 0 || (f.status_to && !f.status_to[0]))
		return;
	unsigned char *entry = plancache_load(argv, &plan, &len);
	struct run_plan p;
	struct jerr e = {0};
	int lock = -1;
	if (!entry)
		return;
	if (runplan_decode(plan, len, &p, &e) == 0) {
		/* The session's workspace belongs to the jail's host uid. */
		unsigned uid = p.flags & RUN_ROOT ? p.host_uid : (unsigned)geteuid();
		if (!f.session || plancache_session_open(f.session, uid, &lock) == 0) {
			p.cached = 1;
			p.wipe[0] = entry, p.wipe[1] = sh_block;
			runner_main(&p, cmd, f.status_to ? f.status_to : "", started);
		}
		runplan_free(&p);
	}
	/* Not replayed: nothing of the entry stays in the Go process that
	 * plans instead (it may be megabytes). */
	free(entry);
}

/* enter_caller replays the plan cached for this invocation, or returns for
 * Go to plan. jail-sh's arguments are first rewritten into the jail run
 * they stand for, as Go's shMain would (plancache/sh.c); when that run is
 * not replayed, it is executed, as shMain does, and Go plans it. Whatever
 * C does not rewrite exactly as Go does is Go's: shMain. */
static void enter_caller(char **argv, uint64_t started)
{
	char **sh = sh_args(argv), **run = argv;
	if (&jail_cli)
		signals_hold(); /* a program that links jail keeps its own */
	if (sh && !(run = plancache_sh_argv(sh)))
		return;
	if (sh)
		setenv(JAIL_SH_ENV, "1", 1); /* its messages are a jail-sh user's */
	replay(run, sh ? run : NULL, started);
	if (sh) {
		execve("/proc/self/exe", run, environ);
		free(run); /* shMain tries again, and says why it cannot */
	}
}

/* enter_run is the runner for a run planned by the Go side (jail/run.go's
 * Plan.Exec): the plan is in a sealed memfd, whose fd _JAIL_RUNPLAN
 * names, after the start time and where the status record goes. */
static void enter_run(char **argv, uint64_t started)
{
	const char *fdv = getenv(JAIL_RUNPLAN_VAR);
	char **cmd = command_after(argv);
	struct jerr e = {0};
	struct handoff h;
	struct run_plan plan;
	(void)started; /* Go's start, in the hand-over, is the run's */
	signals_hold();
	if (!cmd) {
		dprintf(2, "jail: the runner got no plan\n");
		_exit(125);
	}
	if (handoff_read(fdv ? atoi(fdv) : -1, &h, &e) < 0) {
		dprintf(2, "jail: %s\n", e.msg);
		_exit(125);
	}
	unsetenv("_JAIL_STAGE");
	unsetenv(JAIL_RUNPLAN_VAR);
	if (runplan_decode(h.plan, h.plan_len, &plan, &e) < 0) {
		dprintf(2, "jail: %s\n", e.msg);
		_exit(125);
	}
	/* Kept for the next identical invocation, which then runs without
	 * starting Go: only a plan the decoder took. */
	plancache_store(argv, h.plan, h.plan_len, h.deps, h.deps_len);
	plan.wipe[0] = h.buf;
	runner_main(&plan, cmd, h.status_to, h.started);
}

/* enter_userns holds a user namespace open, for jail check's probe
 * (preflight/userns.go), until stdin ends. */
static void enter_userns(char **argv, uint64_t started)
{
	char c;
	for (;;) {
		ssize_t r = read(0, &c, 1);
		if (r == 0 || (r < 0 && errno != EINTR))
			_exit(0);
	}
}

/* The ways in, by _JAIL_STAGE. enter NULL: Go's main takes it. */
static const struct {
	const char *stage; /* NULL: not set, a caller's invocation */
	void (*enter)(char **argv, uint64_t started);
} entries[] = {
	{NULL, enter_caller},    /* a cached plan replayed (jail-sh's too), or Go plans */
	{"run", enter_run},      /* the runner (runner.c), for a plan Go made */
	{"userns", enter_userns}, /* jail check's user namespace probe */
	{"proxy", NULL},         /* the allowlist proxy (proxyctl.c starts it): Go's, jail/proxystage.go */
};

__attribute__((constructor)) static void jail_entry(int argc, char **argv, char **envp)
{
	uint64_t started = monotonic_ns();
	const char *stage = getenv("_JAIL_STAGE");
	(void)argc;
	(void)envp;
	for (size_t i = 0; i < sizeof entries / sizeof entries[0]; i++) {
		if (stage ? !entries[i].stage || strcmp(stage, entries[i].stage) != 0 : entries[i].stage != NULL)
			continue;
		if (entries[i].enter)
			entries[i].enter(argv, started);
		return;
	}
	_exit(125);
}
