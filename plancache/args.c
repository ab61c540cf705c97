/* Reading jail's own arguments the way the CLI's flag parser (Go's, in
 * main.go) does, for the plan cache: only an invocation made of run flags
 * and their values can be replayed, and its key and status target must be
 * what Go would have read. C, as the cache is: the lookup runs before Go. */
#define _GNU_SOURCE
#include <string.h>

#include "plancache/plancache.h"

/* The run flags that take a value: `jail run`'s, which a test reads from
 * the CLI and puts through this walk (cacheflags_test.go). Anything else
 * (help, a subcommand but run, a positional word) leaves the invocation to
 * Go. */
static const char *const run_flags[] = {
	"profile", "p", "workspace", "bind", "ro-bind", "tmpfs", "env", "keep-env",
	"cwd", "hostname", "time-limit", "status-json", "seccomp",
	"memory", "pids", "cpu", "max-output", "disk", "limits-mode", "network", "allow", "pin-host", "credential", "session", "audit-log", "secrets", NULL,
};

/* The boolean ones: a value only after "=". */
static const char *const bool_flags[] = {"seccomp-audit", "tty", "no-tty", NULL};

static int in(const char *const *list, const char *name, size_t n)
{
	for (const char *const *f = list; *f; f++)
		if (strlen(*f) == n && strncmp(*f, name, n) == 0)
			return 1;
	return 0;
}

int plancache_args(char **argv, plancache_arg_fn fn, void *ctx)
{
	char **a = argv + 1;
	if (*a && strcmp(*a, "run") == 0)
		a++;
	for (; *a && strcmp(*a, "--") != 0; a++) {
		const char *tok = *a;
		if (tok[0] != '-' || tok[1] == 0)
			return -1;
		const char *name = tok + (tok[1] == '-' ? 2 : 1);
		if (!*name || *name == '-' || *name == '=')
			return -1;
		const char *eq = strchr(name, '=');
		size_t n = eq ? (size_t)(eq - name) : strlen(name);
		int is_bool = in(bool_flags, name, n);
		if (!is_bool && !in(run_flags, name, n))
			return -1;
		const char *value;
		if (eq) {
			value = eq + 1;
		} else if (is_bool) {
			value = "true";
		} else {
			if (!a[1] || strcmp(a[1], "--") == 0)
				return -1; /* Go: flag needs an argument */
			value = *++a;
		}
		if (fn)
			fn(ctx, name, n, value);
	}
	/* A command must follow. */
	return *a && a[1] ? 0 : -1;
}
