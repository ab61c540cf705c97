/* jail-sh's spelling of the run flags jail's messages suggest: a jail-sh
 * user (an agent's harness) gives no flags, but JAIL_ALLOW and JAIL_FLAGS,
 * so "allow it with --allow HOST" reads "allow it with JAIL_ALLOW=HOST"
 * for a run jail sh made. Only suggestions are respelled, each a phrase
 * of this table: a refusal of a flag's value names the flag, which
 * JAIL_FLAGS holds as it is. The runner runs it, for its one line and the
 * network's refusals (report.c's say), and the CLI through cgo
 * (shhint.go), for Go's: one table for both. C, as the runner is. */
#include <string.h>

#include "jail/shhint.h"

/* The suggestions jail makes, as jail's messages word them, and as
 * jail-sh's: each replacement at most twice as long as its phrase. */
static const struct {
	const char *flag, *sh;
} hints[] = {
	/* proxy/record.go: a refused lookup or connection */
	{"allow it with --allow ", "allow it with JAIL_ALLOW="},
	/* profiles/credential.go: a bound host off the allowlist */
	{"allow it (--allow ", "allow it (JAIL_ALLOW="},
	/* jail/limits.go, cgroup/cg.c: cgroups out of reach */
	{"--limits-mode best-effort", "JAIL_FLAGS=\"--limits-mode best-effort\""},
	/* credential/arm.go: a binding with no secrets file */
	{"give --secrets FILE", "give JAIL_FLAGS=\"--secrets FILE\""},
};

void sh_hints(const char *line, char *out, size_t size)
{
	size_t o = 0;
	if (size == 0)
		return;
	while (*line && o + 1 < size) {
		const char *put = line;
		size_t len = 1, skip = 1;
		for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
			size_t n = strlen(hints[i].flag);
			if (strncmp(line, hints[i].flag, n) == 0) {
				put = hints[i].sh, len = strlen(put), skip = n;
				break;
			}
		}
		if (len > size - 1 - o)
			len = size - 1 - o;
		memcpy(out + o, put, len);
		o += len;
		line += skip;
	}
	out[o] = 0;
}
