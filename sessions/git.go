package sessions

// Running git on the host. Two kinds of repository meet here: the caller's
// own (REPO, trusted as the caller's own `git` in it would be: their
// global config applies, git's own ownership check too) and repositories
// jail makes itself (the new session's, before any jail has run in it, and
// the scratch one diff and export fetch into), where nothing of the
// caller's or the system's config is read at all. Either way no hook runs
// and the caller's GIT_* variables (GIT_DIR, GIT_EXTERNAL_DIFF,
// GIT_CONFIG_PARAMETERS...) are dropped. git never runs on the host with a
// session's .git as its repository: a jail has written it.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"
)

// hardening is given to every host git: command-line config wins over
// every file. No hook (reference-transaction, post-checkout, pre-auto-gc
// run even on fetch and checkout), no fsmonitor daemon, no maintenance or
// gc spawned behind our back, and objects fetched are checked.
var hardening = []string{
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "gc.auto=0",
	"-c", "maintenance.auto=false",
	"-c", "fetch.fsckObjects=true",
	"-c", "transfer.fsckObjects=true",
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=always",
}

// gitTimeout bounds each host git command.
const gitTimeout = 10 * time.Minute

// gitRun is one host git command.
type gitRun struct {
	dir    string   // working directory ("" for /)
	own    bool     // a repository jail made: no global or system config
	env    []string // more variables
	stdout io.Writer
	stdin  io.Reader
	// memKB bounds git's address space (RLIMIT_AS, by the shell's
	// ulimit -v before it execs git): 0 for none.
	memKB int
}

// gitEnv is the environment of a host git: the caller's, without GIT_*.
func gitEnv(own bool, more []string) []string {
	var env []string
	root := os.Geteuid() == 0
	for _, kv := range os.Environ() {
		// git trusts a SUDO_UID's repositories for root (safe.directory):
		// root's git here trusts root's own alone.
		if !strings.HasPrefix(kv, "GIT_") && !(root && strings.HasPrefix(kv, "SUDO_")) {
			env = append(env, kv)
		}
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_OPTIONAL_LOCKS=0")
	if own {
		env = append(env, "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_ATTR_NOSYSTEM=1")
	}
	return append(env, more...)
}

// run runs git args and returns its stdout (when not sent elsewhere),
// trimmed; a failure carries git's last line of stderr.
func (g gitRun) run(args ...string) (string, error) {
	// A time limit: a repository's config may name a FIFO (include.path),
	// and git would wait on it for good.
	ctx, cancel := context.WithTimeout(context.Background(), gitTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "git", append(slicesClone(hardening), args...)...)
	if g.memKB > 0 {
		cmd = exec.CommandContext(ctx, "/bin/sh", append([]string{"-c", fmt.Sprintf(`ulimit -v %d && exec git "$@"`, g.memKB), "git"},
			append(slicesClone(hardening), args...)...)...)
	}
	// The whole group on time-out: git's children (index-pack, a
	// hook-less upload-pack) hold its pipes, and Run would wait on them.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stdin = g.stdin
	cmd.Dir = g.dir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	cmd.Env = gitEnv(g.own, g.env)
	var out bytes.Buffer
	errb := Limited{N: 1 << 16}
	cmd.Stdout = &out
	if g.stdout != nil {
		cmd.Stdout = g.stdout
	}
	cmd.Stderr = &errb
	if err := cmd.Run(); err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", &gitError{args: args, code: ee.ExitCode(), msg: LastLine(errb.String())}
		}
		return "", fmt.Errorf("git %s: %w", args[0], err)
	}
	return strings.TrimSpace(out.String()), nil
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

// gitError is git's failure: its status and its last line of stderr.
type gitError struct {
	args []string
	code int
	msg  string
}

func (e *gitError) Error() string {
	if e.msg == "" {
		return fmt.Sprintf("git %s: exit status %d", e.args[0], e.code)
	}
	return fmt.Sprintf("git %s: %s", e.args[0], e.msg)
}

// exitCode is git's exit status in err, or -1.
func exitCode(err error) int {
	var ge *gitError
	if errors.As(err, &ge) {
		return ge.code
	}
	return -1
}

// Limited keeps the first N bytes written to it and drops the rest, never
// failing a write: what a command says, kept without letting it fill
// memory.
type Limited struct {
	N int
	b bytes.Buffer
}

func (l *Limited) Write(p []byte) (int, error) {
	if room := l.N - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

// String is what was kept.
func (l *Limited) String() string { return l.b.String() }

// LastLine is the last non-empty line of s, made safe for a terminal:
// text a jail wrote (its git's stderr) reaches the caller's screen, so
// control characters (escape sequences) become '?' and it is cut at 300
// bytes.
func LastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	line := strings.TrimSpace(lines[len(lines)-1])
	var b strings.Builder
	for _, r := range line {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || r == utf8.RuneError {
			r = '?'
		}
		if b.Len()+utf8.RuneLen(r) > 300 {
			b.WriteString("...")
			break
		}
		b.WriteRune(r)
	}
	return b.String()
}

// isHex says whether s is an object name of a sha1 or sha256 repository.
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !(s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f') {
			return false
		}
	}
	return true
}
