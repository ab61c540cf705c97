// The other sandboxes agents run their tool calls in, for the agent mode's
// comparison when they are installed: nsjail with the agent profile's
// mounts, limits and a seccomp policy, Anthropic's sandbox runtime (srt)
// and Codex's sandbox, each given the workspace to write in, as agents
// configure them.
package main

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
)

// peer is a sandbox the agent mode measures when its command is on PATH.
type peer struct {
	name string // launcher name and command
	// install says how to get it, for the "not installed" line.
	install string
	// versionArg makes it print its version ("" it has none).
	versionArg string
}

// peers are the optional launchers, in report order.
var peers = []peer{
	{"nsjail", "build it from github.com/google/nsjail and put it on PATH (no Debian 12 package)", ""},
	{"srt", "make bench PEERS=1 (npm install -g @anthropic-ai/sandbox-runtime; it needs socat and ripgrep)", "--version"},
	{"codex", "make bench PEERS=1 (npm install -g @openai/codex)", "--version"},
}

// nsjailCgroupParent is the cgroup, in each v1 hierarchy, that nsjail's run
// cgroups are made in; the bench makes it and removes it after.
const nsjailCgroupParent = "jail-bench-nsjail"

// nsjailDevices are the device nodes bound into nsjail's /dev, jail's set
// but the terminal's pts.
var nsjailDevices = []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"}

// nsjailPolicy is nsjail's seccomp policy (kafel): a deny list of what
// Docker's default profile and jail's refuse an unprivileged command
// (kernel modules and keyrings, mounts and namespaces, tracing, bpf,
// io_uring, userfaultfd, clock and swap changes), everything else allowed.
// kafel names umount2 "umount".
const nsjailPolicy = "ERRNO(1) { acct, add_key, bpf, clock_adjtime, clock_settime, create_module, delete_module, " +
	"finit_module, fsconfig, fsmount, fsopen, fspick, get_kernel_syms, init_module, io_uring_enter, io_uring_register, " +
	"io_uring_setup, ioperm, iopl, kcmp, kexec_file_load, kexec_load, keyctl, lookup_dcookie, mount, move_mount, " +
	"name_to_handle_at, nfsservctl, open_by_handle_at, open_tree, perf_event_open, pivot_root, process_vm_readv, " +
	"process_vm_writev, ptrace, query_module, quotactl, reboot, request_key, setns, settimeofday, swapoff, swapon, " +
	"sysfs, umount, unshare, uselib, userfaultfd, ustat, vhangup } DEFAULT ALLOW"

// nsjailIsolation says what the nsjail command line does, and does not,
// isolate.
const nsjailIsolation = "every namespace; the agent profile's uid and gid mapped as jail maps them; its mounts " +
	"(binds, symlinks, generated files bound read-only, tmpfs /tmp, its own /proc); /dev a tmpfs with null zero full " +
	"random urandom tty bound and a tmpfs /dev/shm; the memory, pids and cpu cgroup limits, the rlimits and the time " +
	"limit; a kafel deny-list seccomp policy. Not: /proc's masks, devpts, jail's own seccomp policy"

// nsjailArgs returns the nsjail arguments (without nsjail itself) that run
// the jail configuration c with the mounts ms (hostMounts of c's): once,
// quiet, every namespace, the uid and gid mapped as jail maps them (to c's
// host ids when the caller is root, to the caller otherwise), c's limits
// as cgroups of host's (on v1 under nsjailCgroupParent in each hierarchy),
// rlimits and time limit, and nsjailPolicy.
func nsjailArgs(c jail.Config, ms []hostMount, host cgroup.Host, euid, egid int) []string {
	outUID, outGID := euid, egid
	if euid == 0 {
		outUID, outGID = int(c.HostUID), int(c.HostGID)
	}
	args := []string{"-Mo", "-Q", "-H", c.Hostname, "-D", c.Dir,
		"-u", fmt.Sprintf("%d:%d", c.UID, outUID), "-g", fmt.Sprintf("%d:%d", c.GID, outGID),
		"-t", strconv.Itoa(int(c.TimeLimit.Seconds()))}
	args = append(args, nsjailRlimits(c.Rlimits)...)
	args = append(args, nsjailCgroups(c.Limits, host)...)
	for _, kv := range c.Env {
		args = append(args, "-E", kv)
	}
	hasProc := false
	for _, m := range ms {
		switch m.Kind {
		case mount.Bind:
			args = append(args, "-B", m.Src+":"+m.Dst)
		case mount.ReadOnlyBind:
			args = append(args, "-R", m.Src+":"+m.Dst)
		case mount.Symlink:
			args = append(args, "-s", m.Target+":"+m.Dst)
		case mount.Tmpfs, mount.Dir: // an empty tmpfs stands for an empty directory
			args = append(args, "-m", "none:"+m.Dst+":tmpfs:"+nsjailTmpfsOptions(m))
		case mount.Proc:
			hasProc = true
			args = append(args, "--proc_path", m.Dst)
		case mount.Dev:
			args = append(args, "-m", "none:"+m.Dst+":tmpfs:mode=0755")
			for _, d := range nsjailDevices {
				args = append(args, "-B", d+":"+filepath.Join(m.Dst, filepath.Base(d)))
			}
			args = append(args, "-m", "none:"+filepath.Join(m.Dst, "shm")+":tmpfs:mode=1777")
		}
	}
	if !hasProc {
		args = append(args, "--disable_proc")
	}
	args = append(args, "--seccomp_string", nsjailPolicy, "--")
	return append(args, c.Argv...)
}

// nsjailTmpfsOptions are a tmpfs's mount options: its size and mode.
func nsjailTmpfsOptions(m hostMount) string {
	var opts []string
	if m.Size > 0 {
		opts = append(opts, "size="+strconv.FormatInt(m.Size, 10))
	}
	if m.Mode != 0 {
		opts = append(opts, fmt.Sprintf("mode=%04o", m.Mode))
	}
	return strings.Join(opts, ",")
}

// nsjailRlimits returns nsjail's rlimit flags: each of c's rlimits, and
// the caller's own for the others (nsjail's defaults are far tighter than
// any jail profile's: 1 MB files, 32 open files).
func nsjailRlimits(rls []jail.Rlimit) []string {
	type flag struct {
		name string
		mb   bool // nsjail takes it in MB
	}
	flags := map[int]flag{
		unix.RLIMIT_AS: {"as", true}, unix.RLIMIT_CORE: {"core", true}, unix.RLIMIT_CPU: {"cpu", false},
		unix.RLIMIT_FSIZE: {"fsize", true}, unix.RLIMIT_NOFILE: {"nofile", false},
		unix.RLIMIT_NPROC: {"nproc", false}, unix.RLIMIT_STACK: {"stack", true},
	}
	values := map[string]string{}
	for _, rl := range rls {
		f, ok := flags[rl.Resource]
		switch {
		case !ok:
			continue
		case rl.Soft == unix.RLIM_INFINITY:
			values[f.name] = "inf"
		case f.mb:
			values[f.name] = strconv.FormatUint(uint64(math.Ceil(float64(rl.Soft)/(1<<20))), 10)
		default:
			values[f.name] = strconv.FormatUint(rl.Soft, 10)
		}
	}
	var args []string
	for _, name := range []string{"as", "core", "cpu", "fsize", "nofile", "nproc", "stack"} {
		v, ok := values[name]
		if !ok {
			v = "soft"
		}
		args = append(args, "--rlimit_"+name, v)
	}
	return args
}

// nsjailCgroups returns nsjail's cgroup flags for the limits l on host.
func nsjailCgroups(l jail.Limits, host cgroup.Host) []string {
	var args []string
	if host.Version == cgroup.V2 {
		args = append(args, "--use_cgroupv2")
	}
	v1 := func(ctrl, flag string) {
		if host.Version == cgroup.V1 {
			args = append(args, "--cgroup_"+flag+"_mount", host.V1[ctrl], "--cgroup_"+flag+"_parent", nsjailCgroupParent)
		}
	}
	if l.Memory > 0 {
		args = append(args, "--cgroup_mem_max", strconv.FormatUint(l.Memory, 10))
		v1("memory", "mem")
	}
	if l.Pids > 0 {
		args = append(args, "--cgroup_pids_max", strconv.FormatUint(l.Pids, 10))
		v1("pids", "pids")
	}
	if l.CPU > 0 {
		args = append(args, "--cgroup_cpu_ms_per_sec", strconv.Itoa(int(l.CPU*1000)))
		v1("cpu", "cpu")
	}
	return args
}

// nsjailCgroupDirs makes nsjail's parent cgroup in each v1 hierarchy it
// uses and returns them, to be removed after; none on v2, where nsjail makes
// its run cgroups under the root.
func nsjailCgroupDirs(host cgroup.Host) ([]string, error) {
	if host.Version != cgroup.V1 {
		return nil, nil
	}
	var dirs []string
	for _, ctrl := range []string{"memory", "pids", "cpu"} {
		if host.V1[ctrl] == "" {
			continue
		}
		d := filepath.Join(host.V1[ctrl], nsjailCgroupParent)
		if err := os.Mkdir(d, 0o755); err != nil && !os.IsExist(err) {
			return dirs, fmt.Errorf("nsjail's parent cgroup: %w", err)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
}

// srtSettings writes srt's settings to dir: no host reachable, writes only
// to the workspace (srt reads the rest of the host's files).
func srtSettings(dir, workspace string) (string, error) {
	settings := map[string]any{
		"network":    map[string]any{"allowedDomains": []string{}, "deniedDomains": []string{}},
		"filesystem": map[string]any{"denyRead": []string{}, "allowWrite": []string{workspace}, "denyWrite": []string{}},
	}
	b, err := json.Marshal(settings)
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "srt-settings.json")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", fmt.Errorf("srt settings: %w", err)
	}
	return path, nil
}

// srtIsolation and codexIsolation say what those sandboxes do as run here.
const (
	srtIsolation = "srt -c runs the string in a shell under bubblewrap: the host's files readable, writes only to the " +
		"workspace (and srt's own temp paths), the network through srt's proxy with no host allowed, a seccomp " +
		"filter against Unix sockets; no cgroup limits"
	codexIsolation = "codex sandbox with the :workspace permission profile: the host's files readable, writes to the " +
		"workspace, no network, its pid namespace and seccomp filter; no cgroup limits"
)

// peerLauncher returns the launcher of the peer p when its command is on
// PATH, or why not, in the agent mode's environment e.
func peerLauncher(p peer, e agentEnv) (agentLauncher, error) {
	c, ms, ws := e.config, e.mounts, e.workspace
	l := agentLauncher{launcher: launcher{Name: p.name}, peer: true}
	exe, err := exec.LookPath(p.name)
	if err != nil {
		l.missing = fmt.Sprintf("%s not on PATH; %s", p.name, p.install)
		return l, nil
	}
	switch p.name {
	case "nsjail":
		// nsjail execs its command's path as given.
		bash, err := exec.LookPath(c.Argv[0])
		if err != nil {
			return l, fmt.Errorf("nsjail's command: %w", err)
		}
		c.Argv = append([]string{bash}, c.Argv[1:]...)
		wms := make([]hostMount, len(ms))
		for i, m := range ms {
			if m.Kind == mount.Bind && m.Src == ws {
				m.Src = e.jailWS // nsjail maps the uid as jail does
			}
			wms[i] = m
		}
		l.Argv = append([]string{exe}, nsjailArgs(c, wms, e.host, os.Geteuid(), os.Getegid())...)
		l.isolation = nsjailIsolation
	case "srt":
		settings, err := srtSettings(e.scratch, ws)
		if err != nil {
			return l, err
		}
		// srt leaves a socket behind in its TMPDIR each call: in ours.
		tmp := filepath.Join(e.scratch, "srt-tmp")
		if err := os.Mkdir(tmp, 0o700); err != nil {
			return l, fmt.Errorf("srt's TMPDIR: %w", err)
		}
		l.Env = []string{"TMPDIR=" + tmp}
		l.Argv = []string{exe, "-s", settings, "-c", agentShellCommand} // srt's shell runs it
		l.Dir = ws
		l.isolation = srtIsolation
	case "codex":
		// Its own home, which Codex refuses under /tmp.
		cache, err := os.UserCacheDir()
		if err == nil {
			err = os.MkdirAll(cache, 0o700)
		}
		if err != nil {
			return l, fmt.Errorf("codex home: %w", err)
		}
		home, err := os.MkdirTemp(cache, "jail-bench-codex-*")
		if err != nil {
			return l, fmt.Errorf("codex home: %w", err)
		}
		l.cleanup = home
		l.Argv = append([]string{exe, "sandbox", "-P", ":workspace", "-C", ws, "--"}, agentArgs...)
		l.Env = []string{"CODEX_HOME=" + home}
		l.Dir = ws
		l.isolation = codexIsolation
	}
	if p.versionArg != "" {
		l.version = versionWith(l.Env, exe, p.versionArg) // codex writes under its home even then
	}
	return l, nil
}
