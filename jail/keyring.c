/* The caller's keys, for session_keyring = "best-effort": a jail that
 * stays in the caller's session keyring (a filter outside jail refuses
 * keyctl) possesses every key in it, and the kernel uses possessed keys
 * for it through calls no keyring filter names (AF_RXRPC's security key,
 * AF_ALG's key by serial, a bound AFS or CIFS mount). So best-effort is
 * honoured only when the caller can see no key but keyrings, and refused
 * when that cannot be told (/proc/keys masked, as a container's is, or
 * unreadable). The init stage's fork checks, as the caller and in the
 * caller's user namespace (a jail's sees only the keys of ids mapped into
 * it), and only where a filter refuses keyctl: C, as the runner it is a
 * fork of (stagestart.c). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "jail/keyring.h"

/* line_type is the key type of one /proc/keys line (its 8th field). */
static int line_type(const char *line, size_t n, char *type, size_t tn)
{
	size_t i = 0;
	for (int field = 0; field < 7; field++) {
		while (i < n && line[i] == ' ')
			i++;
		while (i < n && line[i] != ' ')
			i++;
	}
	while (i < n && line[i] == ' ')
		i++;
	size_t start = i;
	while (i < n && line[i] != ' ')
		i++;
	if (i == start || i - start >= tn)
		return -1;
	memcpy(type, line + start, i - start);
	type[i - start] = 0;
	return 0;
}

int keyring_filtered(void)
{
	/* No keyctl operation has this number: a kernel with keyrings
	 * answers EOPNOTSUPP, one without ENOSYS, a filter as it refuses. */
	return syscall(SYS_keyctl, 0x7fffffff, 0, 0, 0, 0) < 0 && errno != EOPNOTSUPP;
}

int keyring_caller_bare(struct jerr *e)
{
	const char *fix = "fix: run jail from a session keyring of its own with no keys in it, or give the container jail's "
			  "deploy/seccomp-jail.json, which lets each jail join a new one";
	int fd = open("/proc/keys", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct statfs sf;
	struct stat st;
	if (fd < 0 && errno == ENOENT)
		return 0; /* a kernel without keys */
	if (fd < 0 || fstatfs(fd, &sf) < 0 || sf.f_type != PROC_SUPER_MAGIC || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		if (fd >= 0)
			close(fd);
		return jerr_set(e, 0,
				"session_keyring = \"best-effort\": /proc/keys is masked or unreadable here, so jail cannot tell that "
				"the caller's keyrings hold no key the jail would possess; %s",
				fix);
	}
	char buf[8192], type[64];
	size_t have = 0;
	int keys = 0;
	for (;;) {
		ssize_t r = read(fd, buf + have, sizeof buf - have);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			close(fd);
			return jerr_set(e, errno, "session_keyring = \"best-effort\": read /proc/keys");
		}
		have += (size_t)r;
		char *nl, *line = buf;
		while ((nl = memchr(line, '\n', have - (size_t)(line - buf)))) {
			if (line_type(line, (size_t)(nl - line), type, sizeof type) < 0 || strcmp(type, "keyring") != 0)
				keys++;
			line = nl + 1;
		}
		have -= (size_t)(line - buf);
		memmove(buf, line, have);
		if (r == 0 || have == sizeof buf)
			break;
	}
	close(fd);
	if (keys || have)
		return jerr_set(e, 0,
				"session_keyring = \"best-effort\": the caller's keyrings hold %d key%s (see /proc/keys), which a jail "
				"left in its session keyring would possess; %s",
				keys ? keys : 1, keys == 1 ? "" : "s", fix);
	return 0;
}
