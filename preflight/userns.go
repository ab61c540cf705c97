package preflight

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/setup"
)

// userNamespaces checks the knobs that are known to refuse user namespaces,
// then makes one: the knobs only explain a refusal, the attempt decides.
func userNamespaces() Result {
	r := Result{Name: "user namespaces"}
	root := os.Geteuid() == 0
	if n, ok := sysctl("user/max_user_namespaces"); ok && n == 0 {
		r.Detail = "user.max_user_namespaces is 0"
		r.Fix = "sysctl -w user.max_user_namespaces=15000 (and put it in /etc/sysctl.d/ to keep it)"
		return r
	}
	if n, ok := sysctl("kernel/unprivileged_userns_clone"); ok && n == 0 && !root {
		r.Detail = "kernel.unprivileged_userns_clone is 0: only root may create them"
		r.Fix = "sysctl -w kernel.unprivileged_userns_clone=1, or run jail as root"
		return r
	}
	apparmor := setup.RestrictsUserns("/proc/sys")
	err := tryUserns()
	if err == nil {
		r.OK = true
		r.Detail = "a new user namespace can be created by this caller"
		return r
	}
	r.Detail = fmt.Sprintf("creating one failed: %v", err)
	switch {
	case apparmor && !root:
		r.Detail += " (kernel.apparmor_restrict_unprivileged_userns is 1)"
		r.Fix = "run `jail setup` as root: it allows jail in AppArmor (a profile for its path with the `userns,` rule); or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0"
	case seccompFiltered():
		r.Detail += " (this process runs under a seccomp filter, as in a container)"
		r.Fix = "run the container with a seccomp profile that allows unshare/clone of user namespaces (docker: --security-opt seccomp=unconfined), or run jail on the host"
	case errors.Is(err, syscall.ENOSPC):
		r.Fix = "the user namespace limit is reached: raise user.max_user_namespaces"
	default:
		r.Fix = "the kernel needs CONFIG_USER_NS; inside a container, the container must allow nested user namespaces"
	}
	return r
}

// tryUserns starts the binary's own "userns" stage, which exits on EOF of
// stdin, in a new user namespace mapping just the caller.
func tryUserns() error {
	devnull, err := os.Open(os.DevNull)
	if err != nil {
		return err
	}
	defer devnull.Close()
	id := os.Geteuid()
	gid := os.Getegid()
	host := id
	if id == 0 {
		host, gid = 65534, 65534 // root maps to an unprivileged id, as jails do
	}
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"jail"}, &syscall.ProcAttr{
		Env:   []string{"_JAIL_STAGE=userns"},
		Files: []uintptr{devnull.Fd()},
		Sys: &syscall.SysProcAttr{
			Cloneflags:  syscall.CLONE_NEWUSER,
			UidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: host, Size: 1}},
			GidMappings: []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}},
		},
	})
	if err != nil {
		return err
	}
	var ws syscall.WaitStatus
	if _, err := syscall.Wait4(pid, &ws, 0, nil); err != nil {
		return err
	}
	if !ws.Exited() || ws.ExitStatus() != 0 {
		return fmt.Errorf("the probe in the new namespace ended with %v", ws)
	}
	return nil
}

// seccompFiltered reports whether this process already runs under a seccomp
// filter (Seccomp: 2 in /proc/self/status), as container runtimes impose.
func seccompFiltered() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Seccomp:"); ok {
			return strings.TrimSpace(v) == "2"
		}
	}
	return false
}
