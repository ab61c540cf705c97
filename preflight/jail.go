// The whole-jail check: a real jail, built as users' are, and when it
// fails, the cause of the step that failed.
package preflight

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// above is what the checks before the whole jail found missing: a jail
// that fails for one of them is referred to it.
type above struct {
	userns, mountAPI, proc bool
}

// wholeJail builds a real jail and runs a command in it: pivot_root, a
// procfs for a new pid namespace (which a container that masks /proc
// refuses), the minimal /dev, and a writable bind whose new file must
// belong to the bind's owner on the host: the caller, or, when the caller
// is root, the unprivileged user the directory is given to (an idmapped
// mount). The command runs under the default seccomp policy, as users'
// commands do.
func wholeJail(h host, a above) Result {
	r := Result{Name: "a jail runs"}
	if _, err := policyfile.Load("default", policyfile.Options{}); err != nil {
		r.Detail = fmt.Sprintf("seccomp policy: %v", err)
		return r
	}
	dir, err := os.MkdirTemp("", "jail-check-")
	if err != nil {
		r.Detail = fmt.Sprintf("temporary directory: %v", err)
		r.Fixes = []string{"make $TMPDIR (or /tmp) writable"}
		return r
	}
	defer os.RemoveAll(dir)
	owner := os.Geteuid()
	if owner == 0 {
		// Jails refuse root-owned writable binds.
		owner = 65534
		if err := os.Chown(dir, owner, owner); err != nil {
			r.Detail = fmt.Sprintf("temporary directory: %v", err)
			return r
		}
	}
	cfg := probeConfig([]string{"/bin/sh", "-c", "test -r /proc/self/status && test -c /dev/null && : > /workspace/probe"})
	cfg.Mounts = append(cfg.Mounts, mount.Spec{Kind: mount.Bind, Src: dir, Dst: "/workspace"})
	start := time.Now()
	res, err := jail.Run(cfg, start)
	switch {
	case err != nil:
		r.Detail = err.Error()
		r.Cause, r.Fixes = jailCause(h, a, err.Error(), probeDir{dir, fsName(dir)})
		return r
	case res.ExitCode != 0:
		r.Detail = fmt.Sprintf("the test command exited %d %s", res.ExitCode, res.ExecError)
		r.Fixes = []string{"/bin/sh must exist on the host; see the command's output above"}
		return r
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "probe"), &st); err != nil {
		r.Detail = fmt.Sprintf("the file written in the jail is missing: %v", err)
		return r
	}
	if int(st.Uid) != owner {
		r.Detail = fmt.Sprintf("a file written in a writable bind belongs to uid %d on the host, not to the bind's owner (%d)", st.Uid, owner)
		r.Fixes = []string{"the filesystem of $TMPDIR must support idmapped mounts when jail runs as root"}
		return r
	}
	r.OK = true
	r.Detail = fmt.Sprintf("pivot_root, procfs in a new pid namespace, minimal /dev, a writable bind whose files stay its owner's, the default seccomp filter (%.1f ms setup)", float64(res.Setup.Microseconds())/1000)
	return r
}

// probeConfig is the jail the checks run: the host's programs read-only,
// proc, a minimal /dev, the default seccomp filter, no cgroup limits.
func probeConfig(argv []string) jail.Config {
	policy, _ := policyfile.Load("default", policyfile.Options{}) // nil: NewPlan refuses it, and says so
	return jail.Config{
		Profile:    "check",
		Argv:       argv,
		Env:        []string{"PATH=/usr/bin:/bin"},
		Dir:        "/",
		Hostname:   "jail-check",
		NewSession: true,
		UID:        1000, GID: 1000, HostUID: 65534, HostGID: 65534,
		Mounts: []mount.Spec{
			{Kind: mount.ReadOnlyBind, Src: "/usr", Dst: "/usr"},
			{Kind: mount.ReadOnlyBind, Src: "/bin", Dst: "/bin", Optional: true},
			{Kind: mount.ReadOnlyBind, Src: "/lib", Dst: "/lib", Optional: true},
			{Kind: mount.ReadOnlyBind, Src: "/lib64", Dst: "/lib64", Optional: true},
			{Kind: mount.Proc, Dst: "/proc"},
			{Kind: mount.Dev, Dst: "/dev"},
		},
		TimeLimit: 10 * time.Second,
		Seccomp:   policy,
	}
}
