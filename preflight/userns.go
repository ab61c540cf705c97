// The user namespace check: every jail is built in a new user namespace.
package preflight

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"

	"github.com/jail-sandbox/jail/setup"
)

// userNamespaces makes one, then, when it is refused, names every cause it
// finds, each with its fix: the attempt decides, the knobs only explain.
func userNamespaces(h host) Result {
	r := Result{Name: "user namespaces"}
	err := tryUserns()
	if err == nil {
		r.OK = true
		r.Detail = "a new user namespace can be created by this caller"
		return r
	}
	var whys []string
	for _, c := range usernsCauses(h, err) {
		whys = append(whys, c.why)
		r.Fixes = append(r.Fixes, c.fix)
	}
	r.Detail = fmt.Sprintf("creating one failed: %v (%s)", err, strings.Join(whys, "; "))
	return r
}

// cause is one reason a step is refused, and its fix.
type cause struct{ why, fix string }

// usernsCauses are the known reasons the kernel refuses this caller a user
// namespace, as far as h shows them, in the order to fix them: a container's
// seccomp filter first (it refuses whatever the host allows), then the
// host's sysctls and AppArmor. There is always at least one.
func usernsCauses(h host, err error) []cause {
	var cs []cause
	root := h.euid == 0
	if h.filtered {
		cs = append(cs, cause{"this process runs under a seccomp filter, as in a container", seccompJailFix})
	}
	if n, ok := h.sysctl("user/max_user_namespaces"); ok && n == 0 {
		cs = append(cs, cause{"user.max_user_namespaces is 0",
			"sysctl -w user.max_user_namespaces=15000 on the host (and put it in /etc/sysctl.d/ to keep it)"})
	}
	if n, ok := h.sysctl("kernel/unprivileged_userns_clone"); ok && n == 0 && !root {
		cs = append(cs, cause{"kernel.unprivileged_userns_clone is 0: only root may create them",
			"sysctl -w kernel.unprivileged_userns_clone=1 on the host, or run jail as root"})
	}
	if setup.RestrictsUserns(h.procSys) && !root {
		cs = append(cs, cause{appArmorWhy, appArmorFix})
	}
	if len(cs) == 0 && errors.Is(err, syscall.ENOSPC) {
		cs = append(cs, cause{"the user namespace limit is reached", "raise user.max_user_namespaces"})
	}
	if len(cs) == 0 {
		cs = append(cs, cause{"no known setting refuses them here",
			"the kernel needs CONFIG_USER_NS; inside a container, the container must allow nested user namespaces"})
	}
	return cs
}

// The AppArmor restriction (Ubuntu 23.10 and later): user namespaces of
// unprivileged programs without a profile that allows them get no
// capabilities.
const (
	appArmorWhy = "kernel.apparmor_restrict_unprivileged_userns is 1: AppArmor allows them only to programs with a profile that says so"
	appArmorFix = "run `jail setup` as root: it installs an AppArmor profile for jail with the `userns,` rule " +
		"(or sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, for every program)"
)

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
