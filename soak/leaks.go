package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// snapshot is what jail runs could leave behind on the host.
type snapshot struct {
	cgroups   []string // run cgroups (r<pid>-<start>) under jail's parents
	procs     []string // processes of jail's binary, or in another pid namespace
	mounts    int      // lines of the host's mountinfo
	fds       int      // this process's open fds
	halfPlans []string // half-written plan cache entries (.new-*) older than the cache's own sweep leaves them
	plans     map[string]int
	tmp       []string // /tmp entries named jail*
}

// cgroupParents are where run cgroups go on this host (place.go): v1's
// hierarchies, or v2's unified one, under jail/ (and jail/user-UID).
func cgroupParents() []string {
	var dirs []string
	for _, c := range []string{"memory", "pids", "cpu", "cpuacct", ""} {
		top := filepath.Join("/sys/fs/cgroup", c, "jail")
		if c == "" && !isCgroup2() {
			continue
		}
		if _, err := os.Stat(top); err != nil {
			continue
		}
		dirs = append(dirs, top)
		users, _ := filepath.Glob(filepath.Join(top, "user-*"))
		dirs = append(dirs, users...)
	}
	return dirs
}

func isCgroup2() bool {
	_, err := os.Stat("/sys/fs/cgroup/cgroup.controllers")
	return err == nil
}

// take reads the host's state. jailBin is the binary under test; plans
// are the plan cache directories to watch.
func take(jailBin string, plans []string) snapshot {
	var s snapshot
	for _, dir := range cgroupParents() {
		runs, _ := filepath.Glob(filepath.Join(dir, "r*-*"))
		s.cgroups = append(s.cgroups, runs...)
	}
	ourNS, _ := os.Readlink("/proc/self/ns/pid")
	bin, _ := filepath.EvalSymlinks(jailBin)
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		// A zombie holds nothing but its pid, and is its reaper's to
		// take: a killed runner's children go to the host's init.
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); zombie(stat) {
			continue
		}
		exe, _ := os.Readlink(filepath.Join("/proc", e.Name(), "exe"))
		ns, _ := os.Readlink(filepath.Join("/proc", e.Name(), "ns", "pid"))
		if (bin != "" && strings.TrimSuffix(exe, " (deleted)") == bin) || (ns != "" && ns != ourNS) {
			cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
			s.procs = append(s.procs, fmt.Sprintf("%d %s", pid, bytes.ReplaceAll(cmdline, []byte{0}, []byte{' '})))
		}
	}
	if data, err := os.ReadFile("/proc/self/mountinfo"); err == nil {
		s.mounts = bytes.Count(data, []byte{'\n'})
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	s.fds = len(fds)
	s.plans = map[string]int{}
	for _, dir := range plans {
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if fi, err := e.Info(); err == nil && strings.HasPrefix(e.Name(), ".new-") && time.Since(fi.ModTime()) > time.Minute {
				s.halfPlans = append(s.halfPlans, filepath.Join(dir, e.Name()))
			}
		}
		s.plans[dir] = len(entries)
	}
	s.tmp, _ = filepath.Glob("/tmp/jail*")
	return s
}

// zombie reports whether a /proc/PID/stat says state Z.
func zombie(stat []byte) bool {
	i := bytes.LastIndexByte(stat, ')')
	return i >= 0 && i+2 < len(stat) && stat[i+2] == 'Z'
}

// leaks compares after with before: what the runs left.
func leaks(before, after snapshot) []string {
	var out []string
	added := func(what string, b, a []string) {
		for _, x := range a {
			if !slices.Contains(b, x) {
				out = append(out, what+": "+x)
			}
		}
	}
	added("cgroup", before.cgroups, after.cgroups)
	added("process", before.procs, after.procs)
	added("half-written plan", before.halfPlans, after.halfPlans)
	added("file in /tmp", before.tmp, after.tmp)
	if after.mounts != before.mounts {
		out = append(out, fmt.Sprintf("mounts: %d mountinfo lines, %d before", after.mounts, before.mounts))
	}
	if after.fds != before.fds {
		out = append(out, fmt.Sprintf("fds: the caller holds %d, %d before", after.fds, before.fds))
	}
	for dir, n := range after.plans {
		if n > planCap {
			out = append(out, fmt.Sprintf("plan cache %s: %d entries, more than its %d", dir, n, planCap))
		}
	}
	return out
}

// planCap is the plan cache's bound (plancache/store.c's MAX_ENTRIES).
const planCap = 64
