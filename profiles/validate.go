package profiles

// Validation: the rules every value must follow, shared by the decoder (for
// file:line:col problems), the flag overrides (for --flag problems) and
// Config (which re-checks a profile that code may have changed), so a value
// is refused the same way wherever it comes from.

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"path"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// maxID is the largest uid or gid: (uid_t)-1 means "no change" to the
// kernel's set*id calls and can never be mapped.
const maxID = math.MaxUint32 - 1

func checkHostname(s string) error {
	if s == "" || len(s) > 64 {
		return errors.New("must be 1 to 64 characters")
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '.') {
			return errors.New("only letters, digits, '-' and '.' are allowed")
		}
	}
	return nil
}

func checkSessionKeyring(s string) error {
	if s != keyringOwn && s != keyringBestEffort {
		return fmt.Errorf("want %q (a new session keyring for the jail, or the run fails) or %q (where a seccomp filter outside jail "+
			"refuses keyctl, go on in the caller's, which the jail's own filter keeps it from using)", keyringOwn, keyringBestEffort)
	}
	return nil
}

// checkJailPath checks a path inside the jail. It must be absolute and
// clean, so what the planner mounts is exactly what the profile says (no
// "..", which would escape the intended directory, no "//" or trailing "/").
// The jail's root itself is refused unless allowRoot: a mount there would
// replace the whole root.
func checkJailPath(p string, allowRoot bool) error {
	switch {
	case p == "":
		return errors.New("must not be empty")
	case strings.IndexByte(p, 0) >= 0:
		return errors.New("must not contain a NUL byte")
	case !utf8.ValidString(p):
		return errors.New("must be valid UTF-8")
	case strings.ContainsFunc(p, unicode.IsControl):
		// A tab, or the \r of a script with CRLF line ends, would name
		// another path than the one meant: a tmpfs that hides nothing.
		return errors.New("must not contain a control character (tab, newline, carriage return)")
	case p[0] != '/':
		return errors.New("must be absolute")
	case p == "/" && !allowRoot:
		return errors.New("would replace the jail's root")
	case p == "/":
		return nil
	case slices.Contains(strings.Split(p, "/"), ".."):
		return errors.New(`must not contain ".."`)
	case strings.HasSuffix(p, "/"):
		return errors.New("must not end with /")
	case strings.Contains(p, "//"):
		return errors.New(`must not contain "//"`)
	case path.Clean(p) != p:
		return fmt.Errorf("not clean: write %q", path.Clean(p))
	}
	return nil
}

// checkSrc checks a host path: absolute and clean like a jail path, or
// "~/..." for a path under the caller's home, expanded by Config.
func checkSrc(p string) error {
	if p == "~" {
		return nil
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		return checkJailPath("/"+rest, false)
	}
	if strings.HasPrefix(p, "~") {
		return errors.New(`only "~/" (the caller's home) is understood, not "~user"`)
	}
	if p == "/" {
		return errors.New("would give the jail the host's root")
	}
	return checkJailPath(p, false)
}

func checkUserName(s string) error {
	if s == "" {
		return nil // no name: no /etc/passwd is generated
	}
	ok := len(s) <= 32 && (s[0] >= 'a' && s[0] <= 'z' || s[0] == '_')
	for i := 1; ok && i < len(s); i++ {
		c := s[i]
		ok = c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-'
	}
	if !ok {
		return errors.New("want lower-case letters, digits, '_' or '-', starting with a letter or '_', at most 32")
	}
	return nil
}

func checkID(n int64) error {
	if n < 0 || n > maxID {
		return fmt.Errorf("want 0 to %d", uint32(maxID))
	}
	return nil
}

// checkHostID checks a host uid or gid the jail runs as when the caller is
// root (security invariant 1).
func checkHostID(n int64) error {
	if n == 0 {
		return errors.New("means host root; a jail never runs as host root")
	}
	return checkID(n)
}

func checkEnvName(s string) error {
	switch {
	case s == "":
		return errors.New("a variable name must not be empty")
	case strings.ContainsAny(s, "=\x00"):
		return errors.New("a variable name must not contain '=' or NUL")
	case !utf8.ValidString(s):
		return errors.New("a variable name must be valid UTF-8")
	case strings.ContainsFunc(s, unicode.IsControl):
		return errors.New("a variable name must not contain control characters")
	case strings.TrimSpace(s) != s:
		// A slip (--env ' X=1'): " X" would be set and never read.
		return errors.New("a variable name must not begin or end with a space")
	}
	return nil
}

// checkEnvValue checks a variable's value: text, as any value must be.
func checkEnvValue(s string) error { return tomlstrict.CheckText(s) }

// checkNofile refuses an unlimited RLIMIT_NOFILE: the kernel caps it at
// fs.nr_open and setrlimit would fail inside the jail.
func checkNofile(n uint64) error {
	if n == math.MaxUint64 {
		return errors.New("the kernel caps open files at fs.nr_open: give a number")
	}
	return nil
}

func checkTarget(s string) error {
	switch {
	case s == "":
		return errors.New("must not be empty")
	case strings.IndexByte(s, 0) >= 0:
		return errors.New("must not contain a NUL byte")
	case !utf8.ValidString(s):
		return errors.New("must be valid UTF-8")
	}
	return nil
}

// typesWith lists, for a message, the mount types that allow key.
func typesWith(key string) string {
	var names []string
	for _, n := range mountTypeNames {
		if slices.Contains(mountTypes[n].keys, key) {
			names = append(names, n)
		}
	}
	return andList(names)
}

// andList joins words as prose: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// check validates a whole profile held in memory: code may have built or
// changed it, and Config must never convert what Load would refuse.
func (p *Profile) check() error {
	var errs []error
	add := func(key string, err error) {
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", key, err))
		}
	}
	add("hostname", checkHostname(p.Hostname))
	add("cwd", checkJailPath(p.Cwd, true))
	add("user.uid", checkID(int64(p.User.UID)))
	add("user.gid", checkID(int64(p.User.GID)))
	add("user.name", checkUserName(p.User.Name))
	add("user.host_uid", checkHostID(int64(p.User.HostUID)))
	add("user.host_gid", checkHostID(int64(p.User.HostGID)))
	if p.SessionKeyring != "" {
		add("session_keyring", checkSessionKeyring(p.SessionKeyring))
	}
	for i, k := range p.Env.Keep {
		add(tomlstrict.IndexKey("env.keep", i+1), checkEnvName(k))
	}
	for _, k := range slices.Sorted(maps.Keys(p.Env.Set)) {
		add(tomlstrict.JoinKey("env.set", k), checkEnvName(k))
		add(tomlstrict.JoinKey("env.set", k), checkEnvValue(p.Env.Set[k]))
	}
	if p.Limits.Time < 0 {
		add("limits.time", errNegative)
	}
	if p.Limits.Nofile != nil {
		add("limits.nofile", checkNofile(*p.Limits.Nofile))
	}
	p.Limits.check(add)
	p.Network.check(add)
	p.checkCredentials(add)
	add("audit_log", checkHostFile(p.AuditLog))
	add("secrets.file", checkHostFile(p.Secrets.File))
	errs = append(errs, p.Seccomp.check()...)
	dsts := map[string]bool{}
	for i, m := range p.Mounts {
		key := tomlstrict.IndexKey("mount", i+1)
		errs = append(errs, m.check(key)...)
		if dsts[m.Dst] {
			add(key+".dst", fmt.Errorf("%q is mounted twice", m.Dst))
		}
		dsts[m.Dst] = true
	}
	return errors.Join(errs...)
}

// check validates one mount held in memory, named key in errors: its type,
// its paths, and that it sets no field its type does not use.
func (m *Mount) check(key string) []error {
	t, ok := mountTypes[m.Type]
	if !ok {
		return []error{fmt.Errorf("%s.type: unknown type %q", key, m.Type)}
	}
	var errs []error
	if err := checkJailPath(m.Dst, false); err != nil {
		errs = append(errs, fmt.Errorf("%s.dst: %w", key, err))
	}
	for _, f := range []struct {
		key string
		set bool
	}{
		{"src", m.Src != "" && m.Type != workspaceType}, // --workspace fills a workspace's
		{"optional", m.Optional}, {"size", m.Size != 0}, {"mode", m.Mode != 0},
		{"target", m.Target != ""}, {"content", m.Content != ""}, {"masked", m.Unmasked},
	} {
		if f.set && !slices.Contains(t.keys, f.key) {
			errs = append(errs, fmt.Errorf("%s.%s: only for %s", key, f.key, typesWith(f.key)))
		}
	}
	switch {
	case slices.Contains(t.keys, "src") && m.Src == "":
		errs = append(errs, fmt.Errorf("%s.src: required for %s", key, m.Type))
	case m.Src != "":
		if err := checkSrc(m.Src); err != nil {
			errs = append(errs, fmt.Errorf("%s.src: %w", key, err))
		}
	}
	if m.Type == "symlink" {
		if err := checkTarget(m.Target); err != nil {
			errs = append(errs, fmt.Errorf("%s.target: %w", key, err))
		}
	}
	if m.Size < 0 {
		errs = append(errs, fmt.Errorf("%s.size: %w", key, errNegative))
	}
	if m.Mode > 0o7777 {
		errs = append(errs, fmt.Errorf("%s.mode: %w", key, errMode))
	}
	return errs
}
