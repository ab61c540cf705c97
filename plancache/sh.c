/* jail-sh's arguments (a shell's: -c CMD [NAME [ARGS...]], or the command
 * alone) rewritten into the jail run they stand for, as cmd_sh.go's
 * shArgv makes it: profile $JAIL_PROFILE (default agent), session
 * $JAIL_SESSION's workspace or the working directory, the run flags of
 * $JAIL_ALLOW and $JAIL_FLAGS, then bash -c. Run from the jail binary's
 * constructor before the Go runtime starts: C, so that the agent's shell
 * replays its cached plan without starting Go at all. Whatever Go would
 * refuse, or could read otherwise (a non-ASCII byte, which Go's splitting
 * reads as Unicode), is left to Go (cmd_sh_test.go runs every case through
 * both). */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "plancache/entry.h"
#include "plancache/plancache.h"

/* The most words jail-sh's settings may add; more are Go's to rewrite. */
#define SH_MAX_WORDS 4096

/* space is unicode.IsSpace for an ASCII byte (strings.Fields's set). */
static int space(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

/* ascii says s has no byte Go would decode as part of a Unicode rune, and
 * so split elsewhere (U+0085 and U+00A0 are spaces to Go). */
static int ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

/* fields splits s into words at spaces (and at commas when comma is set),
 * as strings.Fields and FieldsFunc do, and returns how many. With out, it
 * copies them there, one after the other, each with its NUL: at most
 * strlen(s) + 1 bytes. */
static size_t fields(const char *s, int comma, char *out)
{
	size_t n = 0;
	for (;;) {
		while (*s && (space(*s) || (comma && *s == ',')))
			s++;
		if (!*s)
			return n;
		n++;
		while (*s && !space(*s) && !(comma && *s == ','))
			if (out)
				*out++ = *s++;
			else
				s++;
		if (out)
			*out++ = 0;
	}
}

/* flags_ok is shFlags's check of JAIL_FLAGS's words (w, n of them, each
 * after the one before's NUL): the first is a flag, and none ends jail's
 * flags ("--", "-") or asks for help (-h, --help, -help=...), which would
 * replace the run. */
static int flags_ok(const char *w, size_t n)
{
	for (size_t i = 0; i < n; i++, w += strlen(w) + 1) {
		const char *name = w;
		while (*name == '-')
			name++;
		size_t len = strcspn(name, "=");
		if ((i == 0 && w[0] != '-') || strcmp(w, "--") == 0 || strcmp(w, "-") == 0 ||
		    (w[0] == '-' && ((len == 1 && name[0] == 'h') || (len == 4 && strncmp(name, "help", 4) == 0))))
			return 0;
	}
	return 1;
}

/* put copies s to *buf, advancing it, and returns where it went. */
static char *put(char **buf, const char *s)
{
	char *at = *buf;
	size_t n = strlen(s) + 1;
	memcpy(at, s, n);
	*buf += n;
	return at;
}

char **pc_sh_argv(char **args, const struct pc_sh *sh)
{
	size_t nargs = 0;
	while (args[nargs])
		nargs++;
	/* -h or --help is Go's to answer, with jail sh's help. */
	if (nargs > 0 && (strcmp(args[0], "-h") == 0 || strcmp(args[0], "--help") == 0 || strcmp(args[0], "-help") == 0))
		return NULL;
	/* The command alone, as a command prefix passes it; or -c CMD. */
	char **tail = args;
	size_t ntail = 1;
	if (nargs != 1 || strcmp(args[0], "-c") == 0) {
		if (nargs < 2 || strcmp(args[0], "-c") != 0)
			return NULL; /* Go's usage line */
		tail = args + 1, ntail = nargs - 1;
	}
	const char *profile = sh->profile && *sh->profile ? sh->profile : "agent";
	const char *where = "--session", *place = sh->session;
	if (!place || !*place)
		where = "--workspace", place = sh->cwd;
	const char *allow = sh->allow ? sh->allow : "", *flags = sh->flags ? sh->flags : "";
	if (!place || !ascii(allow) || !ascii(flags))
		return NULL;
	size_t nallow = fields(allow, 1, NULL), nflags = fields(flags, 0, NULL);
	if (nallow > SH_MAX_WORDS || nflags > SH_MAX_WORDS)
		return NULL;

	/* One block: the pointers, then every string they point to. */
	const char *head[] = {"jail", "run", "-p", profile, where, place};
	const char *shell[] = {"--", sh->shell, "-c", "--"};
	size_t nptr = 6 + 2 * nallow + nflags + 4 + ntail + 1;
	size_t bytes = sizeof "--allow" + strlen(allow) + 1 + strlen(flags) + 1;
	for (size_t i = 0; i < 6; i++)
		bytes += strlen(head[i]) + 1;
	for (size_t i = 0; i < 4; i++)
		bytes += strlen(shell[i]) + 1;
	for (size_t i = 0; i < ntail; i++)
		bytes += strlen(tail[i]) + 1;
	char **argv = malloc(nptr * sizeof *argv + bytes);
	if (!argv)
		return NULL;
	char *buf = (char *)(argv + nptr), *words = buf, **a = argv;
	buf += strlen(allow) + 1;
	fields(allow, 1, words);
	char *fw = buf;
	buf += strlen(flags) + 1;
	fields(flags, 0, fw);
	if (!flags_ok(fw, nflags)) {
		free(argv);
		return NULL; /* Go's refusal, naming the word */
	}
	for (size_t i = 0; i < 6; i++)
		*a++ = put(&buf, head[i]);
	char *opt = put(&buf, "--allow");
	for (size_t i = 0; i < nallow; i++, words += strlen(words) + 1)
		*a++ = opt, *a++ = words;
	for (size_t i = 0; i < nflags; i++, fw += strlen(fw) + 1)
		*a++ = fw;
	for (size_t i = 0; i < 4; i++)
		*a++ = put(&buf, shell[i]);
	for (size_t i = 0; i < ntail; i++)
		*a++ = put(&buf, tail[i]);
	*a = NULL;
	return argv;
}

int pc_getwd(const char *pwd, char *out, size_t n)
{
	/* Go's kludge, as os.Getwd: $PWD, if it names ".". */
	struct stat dot, d;
	if (pwd && pwd[0] == '/') {
		if (stat(".", &dot) < 0)
			return -1;
		size_t len = strlen(pwd);
		if (stat(pwd, &d) == 0 && dot.st_dev == d.st_dev && dot.st_ino == d.st_ino) {
			if (len >= n)
				return -1;
			memcpy(out, pwd, len + 1);
			return 0;
		}
	}
	/* syscall.Getwd: a path the kernel reached ("(unreachable)/..." is
	 * not). */
	long r = syscall(SYS_getcwd, out, n);
	return r < 1 || (size_t)r > n || out[r - 1] != 0 || out[0] != '/' ? -1 : 0;
}

/* environ_as_go says Go would pass the environment on as it is: os.Environ
 * drops empty entries and every later one for a name already set. */
static int environ_as_go(void)
{
	for (char **e = environ; *e; e++) {
		size_t n = strcspn(*e, "=");
		if (!**e)
			return 0;
		if ((*e)[n] != '=')
			continue;
		for (char **f = environ; f < e; f++)
			if (strncmp(*f, *e, n + 1) == 0)
				return 0;
	}
	return 1;
}

char **plancache_sh_argv(char **args)
{
	int saved = errno;
	char cwd[PC_PATH_MAX];
	struct stat st;
	struct pc_sh sh = {
		.profile = getenv("JAIL_PROFILE"),
		.session = getenv("JAIL_SESSION"),
		.allow = getenv("JAIL_ALLOW"),
		.flags = getenv("JAIL_FLAGS"),
		/* cmd_sh.go's choice: bash where the host has it. */
		.shell = stat("/usr/bin/bash", &st) == 0 || stat("/bin/bash", &st) == 0 ? "bash" : "sh",
	};
	char **argv = NULL;
	if (environ_as_go() && ((sh.session && *sh.session) || pc_getwd(getenv("PWD"), cwd, sizeof cwd) == 0)) {
		sh.cwd = cwd;
		argv = pc_sh_argv(args, &sh);
	}
	errno = saved;
	return argv;
}
