// The cgroup checks: whether this caller's runs can have cgroup limits
// (and if not, why: a read-only cgroupfs, no delegation), and whether
// moving a run into its cgroup is cheap.
package preflight

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
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
// fails (limits.mode = "enforce"), so this check is not optional. Where no
// jail runs at all (jailRuns false: a jail runs, above, says why), the jail
// with limits is not tried: its failure would say nothing of cgroups.
func cgroups(h host, jailRuns bool) Result {
	r := Result{Name: "cgroup limits"}
	ch, err := cgroup.Detect()
	if err != nil {
		r.Detail = err.Error()
		return r
	}
	need := cgroup.Limits{Memory: builtinLimits.Memory, Pids: builtinLimits.Pids, CPU: builtinLimits.CPU}.Need()
	if ro := readOnlyCgroups(h, ch, need); len(ro) > 0 {
		// Delegation cannot help, and no caller can make a cgroup:
		// the container's own limits are what is left.
		r.Detail = fmt.Sprintf("%s: the cgroup filesystem is mounted read-only (%s), as a container's is: no caller, root included, can make a run's cgroup there",
			kind(ch), strings.Join(ro, " "))
		r.Fixes = []string{
			"run jail with --limits-mode best-effort (rlimit stand-ins, reported as such) and bound the container itself: " +
				"docker run --memory 512m --pids-limit 256 --cpus 1 (Kubernetes: the container's resources.limits)",
			"or give the container a writable cgroup filesystem (docker run --privileged, which lifts much else too)",
		}
		return r
	}
	pl, err := cgroup.Place(ch, "", h.euid, need)
	if err != nil {
		r.Detail, r.Fixes = placeFailed(err, ch.Version, h.euid)
		return r
	}
	where := runDirs(pl)
	if !jailRuns {
		r.Skipped = true
		r.Detail = fmt.Sprintf("%s; runs would go under %s; a jail with limits is not tried while no jail runs (a jail runs, above)",
			kind(ch), strings.Join(where, " "))
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
	cfg := probeConfig([]string{"/bin/sh", "-c", "read -r l < /proc/self/cgroup; test -n \"$l\""})
	cfg.Limits = builtinLimits
	res, err := jail.Run(cfg, time.Now())
	if err == nil && res.ExitCode != 0 {
		err = fmt.Errorf("the test command exited %d", res.ExitCode)
	}
	if err != nil {
		r.Detail = fmt.Sprintf("%s; runs go under %s, but a jail with limits failed: %v", kind(ch), strings.Join(where, " "), err)
		var se *jail.SetupError
		if errors.As(err, &se) {
			r.Fixes = []string{"see the error; jail check as root shows whether the host or this caller's rights are missing"}
		}
		return r
	}
	r.OK = true
	r.Detail = fmt.Sprintf("%s; runs go under %s; a jail with memory, pids and cpu limits ran (%.1f ms setup)",
		kind(ch), strings.Join(where, " "), float64(res.Setup.Microseconds())/1000)
	return r
}

// runDirs are where a placement's run cgroups go, as absolute paths.
func runDirs(pl cgroup.Placement) []string {
	var where []string
	for _, d := range pl.Dirs {
		if pl.OwnRelative {
			own, _ := cgroup.OwnV2()
			where = append(where, filepath.Join(cgroup.MountPoint, own, d.Path))
		} else {
			where = append(where, d.Path)
		}
	}
	return where
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

// placeFailed splits why this caller's runs cannot have cgroups (Place's
// error) into the detail and the fixes, the last of them running without
// cgroups. Root is never told to run as root.
func placeFailed(err error, v cgroup.Version, euid int) (string, []string) {
	msg := strings.TrimPrefix(err.Error(), cgroup.ErrUnavailable.Error()+": ")
	detail, fix, _ := strings.Cut(msg, "; fix: ")
	if euid == 0 {
		fix = strings.TrimPrefix(strings.TrimPrefix(fix, "run jail as root"), ", or ")
		if fix == "" {
			fix = "the cgroup filesystem refuses root here: see how it is mounted (grep cgroup /proc/self/mountinfo)"
		}
	}
	if v == cgroup.V1 && euid != 0 && strings.Contains(fix, "delegate") {
		fix += fmt.Sprintf(" (`jail setup --user %d` as root does it)", euid)
	}
	var fixes []string
	if fix != "" {
		fixes = append(fixes, fix)
	}
	return detail, append(fixes, "or run with --limits-mode best-effort (rlimit stand-ins, reported as such)")
}

// readOnlyCgroups lists the hierarchies (mount points) a run's cgroup
// needs that are mounted read-only here, as container runtimes mount them.
func readOnlyCgroups(h host, ch cgroup.Host, need cgroup.Controllers) []string {
	var mps []string
	switch ch.Version {
	case cgroup.V2:
		mps = []string{ch.Unified}
	case cgroup.V1:
		for _, n := range need.Names() {
			if mp := ch.V1[n]; mp != "" && !slices.Contains(mps, mp) {
				mps = append(mps, mp)
			}
		}
	}
	var ro []string
	for _, mp := range mps {
		if m := h.mountAt(mp); m != nil && readOnly(m) {
			ro = append(ro, mp)
		}
	}
	return ro
}

// cgroupAttach reports whether moving a process into a cgroup is cheap:
// without favordynmods it waits for an RCU grace period (on an idle host
// here, up to ~16 ms; with it, 0.5 ms), which an agent's calls, spaced by
// the model's thinking, pay every time. On v1 jail moves every run's init
// stage; on v2 it starts it inside (CLONE_INTO_CGROUP), which does not
// wait, so only v1 hosts are told. `jail setup` switches it on. It does
// not apply when this caller's runs get no cgroup (usable false).
func cgroupAttach(usable bool) Result {
	r := Result{Name: "cgroup attach speed", Optional: true}
	if !usable {
		r.Skipped = true
		r.Detail = "does not apply: this caller's runs get no cgroup (cgroup limits, above)"
		return r
	}
	ch, err := cgroup.Detect()
	if err != nil || ch.Version != cgroup.V1 {
		r.OK = true
		r.Detail = "runs start inside their cgroup (CLONE_INTO_CGROUP): nothing to wait for"
		if ch.Version == cgroup.None {
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
	r.Fixes = []string{"a host setting: run `jail setup` as root on the host, not in a container (it switches favordynmods on for the whole kernel, until reboot; forks and exits get a little slower); by hand: " +
		setup.FavorDynModsCommand(setup.FavorDir)}
	return r
}
