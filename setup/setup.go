// Package setup is `jail setup`: the one-time host settings that make jail
// cheaper or possible for other callers, each a step that looks first and
// changes only what is not set yet (favordynmods.go, delegate.go,
// apparmor.go). `jail check` reads the same detection to name what a step
// would remove.
package setup

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
)

// Host is where the steps look and what they change: the real host's paths
// (Detect), or a fake tree in tests. The two changes a fake tree cannot
// take, a cgroup mount and loading an AppArmor profile, are functions.
type Host struct {
	Cgroup      cgroup.Host // the hierarchies, as cgroup.Detect finds them
	Mountinfo   string      // this process's mount table: /proc/self/mountinfo
	ProcSys     string      // /proc/sys
	SecurityFS  string      // /sys/kernel/security
	AppArmorDir string      // /etc/apparmor.d
	FavorDir    string      // where the favordynmods hierarchy is mounted
	Binary      string      // the jail binary's real path, which the AppArmor profile names

	// MountCgroup mounts a cgroup v1 hierarchy with options at dir.
	MountCgroup func(dir, options string) error
	// LoadProfile loads (or replaces) the AppArmor profile in file.
	LoadProfile func(file string) error
}

// FavorDir is where `jail setup` mounts its favordynmods hierarchy, and
// `jail check` tells to.
const FavorDir = "/run/cgroup-favordynmods"

// Detect is this host: its cgroups, the usual paths, and the running
// binary's real path.
func Detect() (Host, error) {
	cg, err := cgroup.Detect()
	if err != nil {
		return Host{}, err
	}
	bin, err := os.Executable()
	if err == nil {
		bin, err = filepath.EvalSymlinks(bin)
	}
	if err != nil {
		return Host{}, fmt.Errorf("find the jail binary: %w", err)
	}
	return Host{
		Cgroup:      cg,
		Mountinfo:   "/proc/self/mountinfo",
		ProcSys:     "/proc/sys",
		SecurityFS:  "/sys/kernel/security",
		AppArmorDir: "/etc/apparmor.d",
		FavorDir:    FavorDir,
		Binary:      bin,
		MountCgroup: func(dir, options string) error { return unix.Mount("cgroup", dir, "cgroup", 0, options) },
		LoadProfile: apparmorParser,
	}, nil
}

// apparmorParser loads file with apparmor_parser -r, which replaces a
// loaded profile of the same name.
func apparmorParser(file string) error {
	bin, err := exec.LookPath("apparmor_parser")
	if err != nil {
		// root's PATH under some sudo setups lacks the sbin directories.
		for _, p := range []string{"/usr/sbin/apparmor_parser", "/sbin/apparmor_parser"} {
			if _, serr := os.Stat(p); serr == nil {
				bin, err = p, nil
				break
			}
		}
	}
	if err != nil {
		return errors.New("apparmor_parser is not installed (package apparmor)")
	}
	out, err := exec.Command(bin, "-r", file).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("apparmor_parser -r %s: %s", file, strings.ReplaceAll(msg, "\n", "; "))
	}
	return nil
}

// A Step is one setting: Plan looks at the host and says what it would
// change, or why nothing.
type Step struct {
	Name string
	Plan func(Host) (Change, error)
}

// Change is what a step found. Either None says why nothing changes (the
// step does not apply here, or it is already set), or Would says what
// Apply would do, and Apply does it and says what it did.
type Change struct {
	None  string
	Would string
	Apply func() (string, error)
}

// Steps are jail setup's steps, in order; users are the callers whose run
// cgroups to delegate.
func Steps(users []int) []Step {
	return []Step{
		{Name: "favordynmods", Plan: favorDynMods},
		{Name: "delegation", Plan: func(h Host) (Change, error) { return delegate(h, users) }},
		{Name: "apparmor", Plan: appArmor},
	}
}

// Run plans every step and, unless dryRun, applies what is not set yet:
// one line on w per step that did (or would do, or need do) nothing or
// changed something. A failed step does not stop the others; the error
// names every one that failed, on one line.
func Run(h Host, steps []Step, dryRun bool, w io.Writer) error {
	var failed []string
	for _, s := range steps {
		c, err := s.Plan(h)
		switch {
		case err != nil: // below, with a failed Apply
		case c.None != "":
			fmt.Fprintf(w, "%s: %s\n", s.Name, c.None)
			continue
		case dryRun:
			fmt.Fprintf(w, "%s: would %s\n", s.Name, c.Would)
			continue
		default:
			var done string
			if done, err = c.Apply(); err == nil {
				fmt.Fprintf(w, "%s: %s\n", s.Name, done)
				continue
			}
		}
		failed = append(failed, fmt.Sprintf("%s: %v", s.Name, err))
	}
	if len(failed) > 0 {
		return errors.New(strings.Join(failed, "; "))
	}
	return nil
}
