// Package cgroup gives each run a cgroup of its own with the profile's
// memory, process and CPU limits, on cgroup v2 or on v1 (hybrid hosts
// included). The Go side (this file) finds the hierarchies and decides where
// a caller's runs go, once, when a run is planned; the C side (cg.c) is the
// runner's, per run: create and limit the cgroup, put the jail in it (v2:
// CLONE_INTO_CGROUP), watch and measure it, kill what is left and remove
// it, and sweep the cgroups of runs whose jail was killed. It is C because a
// run replayed from the plan cache never starts the Go runtime.
package cgroup

// #include "cgroup/cg.h"
import "C"

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/containerd/cgroups/v3"
	"github.com/moby/sys/mountinfo"
	"github.com/moby/sys/userns"
	"golang.org/x/sys/unix"
)

// Version is the cgroup hierarchy runs are limited through.
type Version int

// Versions.
const (
	None Version = iota // no usable cgroup hierarchy
	V1                  // controllers on per-controller v1 hierarchies (also hybrid hosts)
	V2                  // the unified hierarchy
)

func (v Version) String() string {
	switch v {
	case V1:
		return "v1"
	case V2:
		return "v2"
	}
	return "none"
}

// Controllers is a set of controllers, as bits.
type Controllers uint32

// The controllers jail uses: the three that limit, and cpuacct, which on
// v1 is where CPU usage is measured. The bits are cg.h's: the runner reads
// them from the plan.
const (
	Memory  Controllers = C.CG_MEMORY
	Pids    Controllers = C.CG_PIDS
	CPU     Controllers = C.CG_CPU
	CPUAcct Controllers = C.CG_CPUACCT
)

var controllerNames = []struct {
	c    Controllers
	name string
}{{Memory, "memory"}, {Pids, "pids"}, {CPU, "cpu"}, {CPUAcct, "cpuacct"}}

// Names lists the set's controllers by name.
func (c Controllers) Names() []string {
	var n []string
	for _, cn := range controllerNames {
		if c&cn.c != 0 {
			n = append(n, cn.name)
		}
	}
	return n
}

// Host is what the host offers: the version, where cgroup2 is mounted, and
// on v1 where each controller's hierarchy is.
type Host struct {
	Version Version
	Unified string            // the cgroup2 mount point (v2)
	V1      map[string]string // controller name -> its hierarchy's mount point (v1)
	// InUserNS: jail itself runs in a user namespace (a container,
	// probably), which changes the advice when cgroups are out of reach.
	InUserNS bool
	// NsDelegate: cgroup2 is mounted with nsdelegate, so a jail cannot
	// write the limits of the cgroup its cgroup namespace is rooted at,
	// even where the files are its caller's (v2).
	NsDelegate bool
	// SwapAccounted: the kernel limits swap per cgroup (v1: memsw files).
	SwapAccounted bool
}

// LimitsOwnedByJail reports whether a jail of an unprivileged caller would
// own its own limit files (the caller made its cgroup), so that a jail that
// can mount cgroupfs (a user namespace of its own, which only a seccomp
// policy stops) could lift its limits.
func (h Host) LimitsOwnedByJail(euid int) bool {
	return euid != 0 && (h.Version == V1 || !h.NsDelegate)
}

// MountPoint is where containerd/cgroups, and every tool, expect cgroups
// (cg.h's, which the runner uses too).
const MountPoint = C.CG_UNIFIED

const mountPoint = MountPoint

// Detect finds the host's cgroup hierarchies.
func Detect() (Host, error) {
	h := Host{InUserNS: userns.RunningInUserNS()}
	switch cgroups.Mode() {
	case cgroups.Unified:
		h.Version, h.Unified, h.SwapAccounted = V2, mountPoint, true
		if m, err := mountinfo.GetMounts(mountinfo.SingleEntryFilter(mountPoint)); err == nil && len(m) == 1 {
			h.NsDelegate = strings.Contains(","+m[0].VFSOptions+",", ",nsdelegate,")
		}
		return h, nil
	case cgroups.Legacy, cgroups.Hybrid:
		h.Version = V1
	default:
		return h, nil
	}
	mounts, err := mountinfo.GetMounts(mountinfo.FSTypeFilter("cgroup"))
	if err != nil {
		return h, fmt.Errorf("read the mount table: %w", err)
	}
	h.V1 = map[string]string{}
	for _, m := range mounts {
		for _, opt := range strings.Split(m.VFSOptions, ",") {
			for _, cn := range controllerNames {
				// The first mount of a hierarchy wins: bind mounts of
				// it elsewhere see the same cgroups.
				if opt == cn.name && h.V1[opt] == "" {
					h.V1[opt] = m.Mountpoint
				}
			}
		}
	}
	if m := h.V1["memory"]; m != "" {
		_, err := os.Stat(filepath.Join(m, "memory.memsw.limit_in_bytes"))
		h.SwapAccounted = err == nil
	}
	return h, nil
}

// Dir is one hierarchy's directory that run cgroups are made in, and the
// controllers on that hierarchy jail uses.
type Dir struct {
	Path        string // absolute, under the hierarchy's mount point; see Placement.OwnRelative
	Controllers Controllers
}

// Placement is where a caller's runs get their cgroups.
type Placement struct {
	Version Version
	Dirs    []Dir
	// OwnRelative: Dirs[0].Path is relative to the cgroup the runner is in
	// when it runs (v2, a caller's delegated cgroup), which may change
	// from one run to the next (systemd-run --scope makes a new one).
	OwnRelative bool
}

// ErrUnavailable wraps every reason a caller cannot have cgroup limits.
var ErrUnavailable = errors.New("cgroup limits are out of reach")

// DefaultParent is where run cgroups go when the profile does not say:
// on v1, and on v2 for root, /jail at the top of the hierarchy; on v1
// for other callers, /jail/user-UID, which root delegates by creating it
// and giving it to the user; on v2 for other callers, jail/ under the
// caller's own (delegated) cgroup.
func DefaultParent(v Version, euid int) string {
	if euid == 0 || v == V2 {
		return "/jail"
	}
	return "/jail/user-" + strconv.Itoa(euid)
}

// Place decides where this caller's runs get their cgroups: under parent
// ("" for DefaultParent), with the controllers need. It checks that the
// caller may create them there, and when it may not, says how to fix it.
func Place(h Host, parent string, euid int, need Controllers) (Placement, error) {
	switch h.Version {
	case V1:
		return placeV1(h, parent, euid, need)
	case V2:
		return placeV2(h, parent, euid, need)
	}
	return Placement{}, fmt.Errorf("%w: no cgroup filesystem at %s; fix: mount cgroup2 there (or the v1 controllers)", ErrUnavailable, mountPoint)
}

func placeV1(h Host, parent string, euid int, need Controllers) (Placement, error) {
	pl := Placement{Version: V1}
	if parent == "" {
		parent = DefaultParent(V1, euid)
	}
	byMount := map[string]Controllers{}
	var order []string
	for _, cn := range controllerNames {
		if need&cn.c == 0 {
			continue
		}
		m := h.V1[cn.name]
		if m == "" {
			if cn.c == CPUAcct {
				continue // only measures: usage then comes from the wait status
			}
			return pl, fmt.Errorf("%w: cgroup v1 has no %s hierarchy; fix: mount it, or boot with cgroup v2", ErrUnavailable, cn.name)
		}
		if _, ok := byMount[m]; !ok {
			order = append(order, m)
		}
		byMount[m] |= cn.c
	}
	for _, m := range order {
		dir := filepath.Join(m, parent)
		if err := rootOwned(m, dir, euid); err != nil {
			return pl, err
		}
		if err := writableDir(dir, euid); err != nil {
			fix := "run jail as root"
			if errors.Is(err, errReadOnly) {
				fix = readOnlyFix
			} else if euid != 0 {
				fix += fmt.Sprintf(", or have root delegate %s to uid %d: for c in %s; do mkdir -p /sys/fs/cgroup/$c%s && chown %d /sys/fs/cgroup/$c%s; done",
					parent, euid, strings.Join(need.Names(), " "), parent, euid, parent)
			}
			return pl, fmt.Errorf("%w: cgroup v1: %v; fix: %s", ErrUnavailable, err, fix)
		}
		pl.Dirs = append(pl.Dirs, Dir{Path: dir, Controllers: byMount[m]})
	}
	return pl, nil
}

func placeV2(h Host, parent string, euid int, need Controllers) (Placement, error) {
	pl := Placement{Version: V2}
	need &^= CPUAcct // v2 measures CPU without a controller
	base := ""
	switch {
	case parent != "":
		base = filepath.Dir(parent)
	case euid == 0:
		parent, base = "/jail", "/"
	default:
		own, err := OwnV2()
		if err != nil {
			return pl, fmt.Errorf("%w: %v", ErrUnavailable, err)
		}
		parent, base, pl.OwnRelative = "jail", own, true
	}
	baseDir := filepath.Join(h.Unified, base)
	have, err := os.ReadFile(filepath.Join(baseDir, "cgroup.controllers"))
	if err != nil {
		return pl, fmt.Errorf("%w: cgroup v2: %v", ErrUnavailable, err)
	}
	var missing []string
	for _, n := range need.Names() {
		if !slices.Contains(strings.Fields(string(have)), n) {
			missing = append(missing, n)
		}
	}
	fix := fixV2(h, euid)
	if len(missing) > 0 {
		return pl, fmt.Errorf("%w: cgroup v2: %s does not have the %s controller(s); fix: %s",
			ErrUnavailable, baseDir, strings.Join(missing, " "), fix)
	}
	dir := filepath.Join(h.Unified, base, filepath.Base(parent))
	if pl.OwnRelative {
		dir = parent
	}
	if err := rootOwned(h.Unified, dir, euid); err != nil {
		return pl, err
	}
	if err := writableDir(filepath.Join(h.Unified, base, filepath.Base(parent)), euid); err != nil {
		if errors.Is(err, errReadOnly) {
			fix = readOnlyFix
		}
		return pl, fmt.Errorf("%w: cgroup v2: %v; fix: %s", ErrUnavailable, err, fix)
	}
	pl.Dirs = []Dir{{Path: dir, Controllers: need}}
	return pl, nil
}

func fixV2(h Host, euid int) string {
	switch {
	case h.InUserNS:
		return "give the container a writable cgroup v2 subtree (docker/podman: --cgroupns=private, and a cgroup manager that delegates, e.g. systemd with Delegate=yes)"
	case euid != 0:
		return "run jail as root, or in a delegated scope of its own: systemd-run --user --scope -p Delegate=yes jail ..."
	}
	return "check that cgroup2 is mounted read-write at " + mountPoint
}

// rootOwned refuses, for a root caller, a parent of which a level is
// another user's: that user could rename root's run cgroup away and plant
// one of its own under the name (v1 lets a directory's owner do that), and
// the jail would run in it, unlimited.
func rootOwned(mount, dir string, euid int) error {
	if euid != 0 || !strings.HasPrefix(dir, "/") {
		return nil
	}
	for d := dir; len(d) >= len(mount); d = filepath.Dir(d) {
		var st unix.Stat_t
		if unix.Stat(d, &st) == nil && (st.Uid != 0 || st.Mode&0o022 != 0) {
			return fmt.Errorf("cgroup parent %s: %s belongs to uid %d or is writable by others (mode %o), who could swap root's run cgroups for their own; use a parent only root can write", dir, d, st.Uid, st.Mode&0o7777)
		}
		if d == mount {
			break
		}
	}
	return nil
}

// writableDir checks that dir exists and the caller may make cgroups in
// it, or, when it is missing, that the caller may make it: the runner makes
// the missing levels (root, any; another user, dir itself, in a parent
// delegated to it).
// readOnlyAbove is errReadOnly when the nearest existing level above the
// missing d is on a read-only filesystem.
func readOnlyAbove(d string) error {
	for p := filepath.Dir(d); ; p = filepath.Dir(p) {
		if _, err := os.Stat(p); err == nil {
			if readOnly(p) {
				return fmt.Errorf("%w (%s), as a container's is: no caller, root included, may create cgroups there", errReadOnly, p)
			}
			return nil
		}
		if p == "/" {
			return nil
		}
	}
}

// readOnly says whether the mount dir is on is read-only: by its flags
// (statfs), as access(2) reports EACCES before EROFS to a caller who
// could not write there anyway.
func readOnly(dir string) bool {
	var st unix.Statfs_t
	return unix.Statfs(dir, &st) == nil && st.Flags&unix.ST_RDONLY != 0
}

// errReadOnly: the cgroup filesystem is mounted read-only, which no
// delegation and no uid gets past.
var errReadOnly = errors.New("the cgroup filesystem is mounted read-only")

// readOnlyFix is what helps where the cgroup filesystem is read-only.
const readOnlyFix = "run jail with --limits-mode best-effort (rlimit stand-ins, reported as such) and bound the container itself: docker run --memory 512m --pids-limit 256 --cpus 1; or give the container a writable cgroup filesystem"

func writableDir(dir string, euid int) error {
	for d := dir; ; d = filepath.Dir(d) {
		var st unix.Stat_t
		err := unix.Stat(d, &st)
		if err == nil {
			if readOnly(d) {
				return fmt.Errorf("%w (%s), as a container's is: no caller, root included, may create cgroups there", errReadOnly, d)
			} else if err := unix.Access(d, unix.W_OK); err != nil {
				return fmt.Errorf("uid %d may not create cgroups in %s", euid, d)
			}
			return nil
		}
		if !errors.Is(err, unix.ENOENT) || d == "/" {
			return fmt.Errorf("%s: %w", d, err)
		}
		if euid != 0 && d != dir {
			// Missing, and no one could make it where the
			// filesystem is read-only: that is the cause to name.
			if err := readOnlyAbove(d); err != nil {
				return err
			}
			return fmt.Errorf("%s does not exist", d)
		}
	}
}

// RunnerLeaf is the leaf of a delegated cgroup that jail moves itself to,
// so that the cgroup holds no process and may hand controllers down to its
// jail/ subtree (cg.c does it for the runner, with cg.h's name).
const RunnerLeaf = C.CG_RUNNER_LEAF

// OwnV2 is the caller's cgroup on the unified hierarchy, from
// /proc/self/cgroup; a process already in RunnerLeaf counts as in its
// parent, as the runner reckons it.
func OwnV2() (string, error) {
	_, own, err := cgroups.ParseCgroupFileUnified("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("read /proc/self/cgroup: %w", err)
	}
	if own == "" {
		return "", errors.New("/proc/self/cgroup names no cgroup v2 path")
	}
	if filepath.Base(own) == RunnerLeaf {
		own = filepath.Dir(own)
	}
	return own, nil
}

// MoveToLeaf moves this process into RunnerLeaf of its own delegated v2
// cgroup, as the runner moves itself: for a process (jail check) that
// starts runners and stays, so that it does not keep its cgroup from
// handing controllers down.
func MoveToLeaf() error {
	own, err := OwnV2()
	if err != nil {
		return err
	}
	leaf := filepath.Join(mountPoint, own, RunnerLeaf)
	if err := os.Mkdir(leaf, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	return os.WriteFile(filepath.Join(leaf, "cgroup.procs"), []byte("0"), 0)
}
