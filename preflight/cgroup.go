package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/setup"
)

// builtinLimits are the cgroup limits of the built-in profiles.
var builtinLimits = jail.Limits{Memory: 512 << 20, Pids: 256, CPU: 1}

// cgroups reports whether the built-in profiles' cgroup limits work for
// this caller: where its runs' cgroups would go, and a real jail run with
// memory, process and CPU limits. Without them every built-in profile
// fails (limits.mode = "enforce"), so this check is not optional.
func cgroups() Result {
	r := Result{Name: "cgroup limits"}
	host, err := cgroup.Detect()
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	need := cgroup.Limits{Memory: builtinLimits.Memory, Pids: builtinLimits.Pids, CPU: builtinLimits.CPU}.Need()
	pl, err := cgroup.Place(host, "", os.Geteuid(), need)
	if err != nil {
		msg := strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": ")
		r.Detail, r.Fix, _ = strings.Cut(msg, "; fix: ")
		if host.Version == cgroup.V1 && os.Geteuid() != 0 && strings.Contains(r.Fix, "delegate") {
			r.Fix += fmt.Sprintf(" (`jail setup --user %d` as root does it)", os.Geteuid())
		}
		r.Fix += `; or run with --limits-mode best-effort (rlimit stand-ins, reported as such)`
		return r
	}
	if pl.OwnRelative {
		// This process stays in its delegated cgroup while the probe
		// runs: out of the way first, as the runner would move itself.
		if err := cgroup.MoveToLeaf(); err != nil {
			r.Detail = fmt.Sprintf("cgroup v2: move to a leaf of this caller's cgroup: %v", err)
			return r
		}
	}
	var where []string
	for _, d := range pl.Dirs {
		if pl.OwnRelative {
			own, _ := cgroup.OwnV2()
			where = append(where, filepath.Join("/sys/fs/cgroup", own, d.Path))
		} else {
			where = append(where, d.Path)
		}
	}
	cfg := probeConfig([]string{"/bin/sh", "-c", "read -r l < /proc/self/cgroup; test -n \"$l\""})
	cfg.Limits = builtinLimits
	res, err := jail.Run(cfg, time.Now())
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("the test command exited %d", res.ExitCode)
	}
	if err != nil {
		r.Detail = fmt.Sprintf("%s; runs go under %s, but a jail with limits failed: %v", kind(host), strings.Join(where, " "), err)
		var se *jail.SetupError
		if errors.As(err, &se) {
			r.Fix = "see the error; jail check as root shows whether the host or this caller's rights are missing"
		}
		return r
	}
	r.OK = true
	r.Detail = fmt.Sprintf("%s; runs go under %s; a jail with memory, pids and cpu limits ran (%.1f ms setup)",
		kind(host), strings.Join(where, " "), float64(res.Setup.Microseconds())/1000)
	return r
}

func kind(h cgroup.Host) string {
	if h.Version == cgroup.V2 {
		return "cgroup v2"
	}
	if _, err := os.Stat("/sys/fs/cgroup/unified/cgroup.controllers"); err == nil {
		return "cgroup v1 (hybrid: the controllers on v1)"
	}
	return "cgroup v1"
}

// cgroupAttach reports whether moving a process into a cgroup is cheap:
// without favordynmods it waits for an RCU grace period (on an idle host
// here, up to ~16 ms; with it, 0.5 ms), which an agent's calls, spaced by
// the model's thinking, pay every time. On v1 jail moves every run's init
// stage; on v2 it starts it inside (CLONE_INTO_CGROUP), which does not
// wait, so only v1 hosts are told. `jail setup` switches it on.
func cgroupAttach() Result {
	r := Result{Name: "cgroup attach speed", Optional: true}
	host, err := cgroup.Detect()
	if err != nil || host.Version != cgroup.V1 {
		r.OK = true
		r.Detail = "runs start inside their cgroup (CLONE_INTO_CGROUP): nothing to wait for"
		if host.Version == cgroup.None {
			r.Detail = "no cgroups"
		}
		return r
	}
	if on, err := setup.FavorDynModsOn("/proc/self/mountinfo"); err == nil && on != "" {
		r.OK = true
		r.Detail = "favordynmods is on (" + on + "): moving a run into its cgroup does not wait for an RCU grace period"
		return r
	}
	r.Detail = "cgroup v1 without favordynmods: every run waits for an RCU grace period as it moves into its cgroup, " +
		"up to ~16 ms per call after idle time (an agent's calls, spaced by its thinking, pay it each time; ~0.5 ms with favordynmods)"
	r.Fix = "run `jail setup` as root: it switches favordynmods on (global, until reboot; forks and exits get a little slower); by hand: " +
		setup.FavorDynModsCommand(setup.FavorDir)
	return r
}
