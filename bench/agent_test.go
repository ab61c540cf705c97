package main

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/jail"
	"github.com/jail-sandbox/jail/mount"
)

// TestAgentModeWithStandIn runs the agent mode alone, briefly, with the
// stand-in jail script, a real bwrap, the stand-in as codex, and srt and
// nsjail missing (PATH holds only what the test puts there).
func TestAgentModeWithStandIn(t *testing.T) {
	if testing.Short() {
		t.Skip("runs real sandboxes")
	}
	bwrap := workingBwrap(t)
	bin := t.TempDir()
	fake, err := filepath.Abs("testdata/fakejail")
	if err != nil {
		t.Fatal(err)
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	for name, target := range map[string]string{"bwrap": bwrap, "bash": bash, "codex": fake} {
		if err := os.Symlink(target, filepath.Join(bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	t.Setenv("PATH", bin)
	t.Setenv("XDG_CACHE_HOME", t.TempDir()) // codex's home goes there

	jsonPath := filepath.Join(t.TempDir(), "bench.json")
	cfg := config{jail: "testdata/fakejail", only: onlyAgent, idle: time.Millisecond, agentWarmup: 1, agentRounds: 3,
		seed: 42, timeout: 10 * time.Second, jsonPath: jsonPath}
	var out bytes.Buffer
	if err := run(cfg, &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	text := out.String()
	for _, want := range []string{"agent mode", "1 ms idle", "seed 42", "favordynmods", "cgroup ",
		"jail-sh          JAIL_SESSION=bench-", "--unshare-user", "--bind ", "/workspace",
		"nsjail           not installed", "srt              not installed", "session-nocgroup", "codex sandbox -P :workspace",
		"ratio jail-session/jail-workspace"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	// Each launcher at least twice: its command line, then its figures.
	for _, name := range []string{"jail-workspace", "jail-session", "jail-sh", "jail-nocgroup", "bwrap", "nsjail", "srt", "codex"} {
		if n := linesStarting(text, "  "+name+" "); n < 2 {
			t.Errorf("output has %d lines for %s, want 2 or more:\n%s", n, name, text)
		}
	}

	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	a := rep.Agent
	if a == nil {
		t.Fatalf("JSON has no agent part: %s", b)
	}
	if a.Seed != 42 || a.IdleMs != 1 || a.Rounds != 3 || a.Warmup != 1 || a.CgroupVersion == "" || a.Workspace == "" {
		t.Errorf("JSON agent settings: %+v", a)
	}
	for _, key := range []string{`"favordynmods":`, `"cgroup_version":`, `"idle_ms":`, `"session_workspace_median_ratio":`} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("JSON lacks %s", key)
		}
	}
	status := map[string]string{}
	for _, l := range a.Launchers {
		status[l.Name] = l.Status
		if l.Status == statusMeasured && (l.Stats.Runs != 3 || len(l.SamplesMs) != 3 || l.BwrapMedian <= 0 || l.BwrapRound <= 0) {
			t.Errorf("JSON figures of %s: %+v", l.Name, l)
		}
	}
	want := map[string]string{"jail-workspace": statusMeasured, "jail-session": statusMeasured, "jail-sh": statusMeasured,
		"jail-nocgroup": statusMeasured, "output-capped": statusMeasured, "output-uncapped": statusMeasured,
		"bwrap": statusMeasured, "nsjail": statusNotInstalled,
		"srt": statusNotInstalled, "codex": statusMeasured}
	for name, s := range want {
		if status[name] != s {
			t.Errorf("JSON: %s is %q, want %q", name, status[name], s)
		}
	}
	if a.SessionWorkspaceMedian <= 0 || a.SessionWorkspaceRound <= 0 {
		t.Errorf("JSON: no jail-session/jail-workspace ratios: %+v", a)
	}
	if a.RelayMedian <= 0 || a.RelayRound <= 0 {
		t.Errorf("JSON: no output-capped/output-uncapped ratios: %+v", a)
	}
	if _, err := os.Stat(a.Workspace); !os.IsNotExist(err) {
		t.Errorf("workspace %s left behind: %v", a.Workspace, err)
	}
}

// linesStarting counts the lines of text that start with prefix.
func linesStarting(text, prefix string) int {
	n := 0
	for line := range strings.Lines(text) {
		if strings.HasPrefix(line, prefix) {
			n++
		}
	}
	return n
}

// workingBwrap returns bwrap's path, or skips the test where it cannot
// run.
func workingBwrap(t *testing.T) string {
	t.Helper()
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap not on PATH")
	}
	if out, err := exec.Command(bwrap, "--unshare-all", "--unshare-user", "--ro-bind", "/", "/", "/bin/true").CombinedOutput(); err != nil {
		t.Skipf("bwrap cannot run here: %v: %s", err, out)
	}
	return bwrap
}

// orderLaunchers returns n launchers that each append their index to log.
func orderLaunchers(n int, log string) []launcher {
	ls := make([]launcher, n)
	for i := range ls {
		ls[i] = launcher{Name: strconv.Itoa(i), Argv: []string{"/bin/sh", "-c", "echo " + strconv.Itoa(i) + " >> " + log}}
	}
	return ls
}

// callOrder runs rounds of the n order launchers with seed and returns
// each round's order.
func callOrder(t *testing.T, n, warmup, rounds int, seed uint64) [][]string {
	t.Helper()
	log := filepath.Join(t.TempDir(), "log")
	res := spacedRounds(newTestCaller(t, 10*time.Second), orderLaunchers(n, log), warmup, rounds, 0, rand.New(rand.NewPCG(seed, 0)))
	for i, r := range res {
		if r.err != nil || len(r.samples) != rounds || r.calls != warmup+rounds {
			t.Fatalf("launcher %d: %d samples, %d calls, %v", i, len(r.samples), r.calls, r.err)
		}
	}
	b, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	calls := strings.Fields(string(b))
	if len(calls) != n*(warmup+rounds) {
		t.Fatalf("%d calls logged, want %d", len(calls), n*(warmup+rounds))
	}
	var orders [][]string
	for c := range slices.Chunk(calls, n) {
		orders = append(orders, c)
	}
	return orders
}

func TestSpacedRoundsOrder(t *testing.T) {
	const n = 4
	orders := callOrder(t, n, 2, 12, 7)
	follows := map[[2]string]int{} // how many rounds b came right after a
	distinct := map[string]bool{}
	for _, o := range orders {
		sorted := slices.Sorted(slices.Values(o))
		if !slices.Equal(sorted, []string{"0", "1", "2", "3"}) {
			t.Fatalf("a round called %v, not each launcher once", o)
		}
		distinct[strings.Join(o, "")] = true
		for i := 1; i < n; i++ {
			follows[[2]string{o[i-1], o[i]}]++
		}
	}
	if len(distinct) < 2 {
		t.Errorf("every round ran in the same order: %v", orders)
	}
	for pair, k := range follows {
		if k == len(orders) {
			t.Errorf("%s followed %s in every round", pair[1], pair[0])
		}
	}
	if again := callOrder(t, n, 2, 12, 7); !slices.EqualFunc(orders, again, slices.Equal) {
		t.Errorf("seed 7 gave %v, then %v", orders, again)
	}
	if other := callOrder(t, n, 2, 12, 8); slices.EqualFunc(orders, other, slices.Equal) {
		t.Errorf("seeds 7 and 8 gave the same orders: %v", orders)
	}
}

func TestSpacedRoundsDropsFailing(t *testing.T) {
	ls := []launcher{
		{Name: "ok", Argv: []string{"/bin/true"}},
		{Name: "bad", Argv: []string{"/bin/sh", "-c", "echo nope >&2; exit 3"}},
	}
	res := spacedRounds(newTestCaller(t, 10*time.Second), ls, 1, 4, 0, rand.New(rand.NewPCG(1, 0)))
	if res[0].err != nil || len(res[0].samples) != 4 {
		t.Errorf("ok: %d samples, %v", len(res[0].samples), res[0].err)
	}
	if res[1].err == nil || !strings.Contains(res[1].err.Error(), "nope") || res[1].calls != 0 || len(res[1].samples) != 0 {
		t.Errorf("bad: %+v", res[1])
	}
}

// testConfig is a jail configuration with one mount of each kind, the host
// paths under root.
func testConfig(root string) jail.Config {
	return jail.Config{
		Argv: []string{"bash", "-c", "true"}, Env: []string{"HOME=/workspace", "PATH=/usr/bin"}, Dir: "/workspace",
		Hostname: "jail", NewSession: true, UID: 1000, GID: 1000, HostUID: 65534, HostGID: 65534,
		TimeLimit: 10 * time.Minute,
		Limits:    jail.Limits{Memory: 512 << 20, Pids: 256, CPU: 1},
		Rlimits: []jail.Rlimit{{Resource: unix.RLIMIT_CORE}, {Resource: unix.RLIMIT_NOFILE, Soft: 1024, Hard: 1024},
			{Resource: unix.RLIMIT_FSIZE, Soft: 1 << 30, Hard: 1 << 30}, {Resource: unix.RLIMIT_AS, Soft: unix.RLIM_INFINITY}},
		Mounts: []mount.Spec{
			{Kind: mount.ReadOnlyBind, Src: "/usr", Dst: "/usr"},
			{Kind: mount.ReadOnlyBind, Src: "/bin", Dst: "/bin", Optional: true},
			{Kind: mount.ReadOnlyBind, Src: "/lib32", Dst: "/lib32", Optional: true},
			{Kind: mount.Proc, Dst: "/proc"},
			{Kind: mount.Dev, Dst: "/dev"},
			{Kind: mount.Tmpfs, Dst: "/tmp", Size: 256 << 20, Mode: 0o1777},
			{Kind: mount.File, Dst: "/etc/hostname", Mode: 0o644, Content: []byte("jail\n")},
			{Kind: mount.Dir, Dst: "/empty", Mode: 0o700},
			{Kind: mount.Symlink, Dst: "/etc/mtab", Target: "../proc/self/mounts"},
			{Kind: mount.Bind, Src: "/ws", Dst: "/workspace"},
		},
	}
}

func TestBwrapConfigArgs(t *testing.T) {
	root := fakeRoot(t)
	if err := os.Mkdir(filepath.Join(root, "ws"), 0o700); err != nil {
		t.Fatal(err)
	}
	scratch := t.TempDir()
	ms, err := hostMounts(testConfig(root).Mounts, root, scratch)
	if err != nil {
		t.Fatal(err)
	}
	got := bwrapConfigArgs(testConfig(root), ms)
	file := filepath.Join(scratch, "file6")
	want := []string{
		"--unshare-all", "--unshare-user", "--die-with-parent", "--new-session", "--uid", "1000", "--gid", "1000",
		"--hostname", "jail", "--clearenv", "--setenv", "HOME", "/workspace", "--setenv", "PATH", "/usr/bin",
		"--ro-bind", root + "/usr", "/usr",
		"--symlink", "usr/bin", "/bin",
		"--proc", "/proc", "--dev", "/dev",
		"--size", "268435456", "--perms", "1777", "--tmpfs", "/tmp",
		"--ro-bind", file, "/etc/hostname",
		"--perms", "0700", "--dir", "/empty",
		"--symlink", "../proc/self/mounts", "/etc/mtab",
		"--bind", root + "/ws", "/workspace",
		"--chdir", "/workspace", "bash", "-c", "true",
	}
	if !slices.Equal(got, want) {
		t.Errorf("bwrapConfigArgs:\n got %q\nwant %q", got, want)
	}
	b, err := os.ReadFile(file)
	if fi, serr := os.Stat(file); err != nil || serr != nil || string(b) != "jail\n" || fi.Mode().Perm() != 0o644 {
		t.Errorf("generated /etc/hostname: %q, %v, %v", b, err, serr)
	}
	if _, err := hostMounts([]mount.Spec{{Kind: mount.ReadOnlyBind, Src: "/missing", Dst: "/m"}}, root, scratch); err == nil {
		t.Error("hostMounts of a missing required source: no error")
	}
}

func TestNsjailArgs(t *testing.T) {
	root := fakeRoot(t)
	if err := os.Mkdir(filepath.Join(root, "ws"), 0o700); err != nil {
		t.Fatal(err)
	}
	c := testConfig(root)
	ms, err := hostMounts(c.Mounts, root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	v1 := cgroup.Host{Version: cgroup.V1, V1: map[string]string{"memory": "/cg/memory", "pids": "/cg/pids", "cpu": "/cg/cpu"}}
	got := strings.Join(nsjailArgs(c, ms, v1, 0, 0), " ")
	for _, want := range []string{
		"-Mo -Q -H jail -D /workspace -u 1000:65534 -g 1000:65534 -t 600 ",
		"--rlimit_as inf --rlimit_core 0 --rlimit_cpu soft --rlimit_fsize 1024 --rlimit_nofile 1024 --rlimit_nproc soft --rlimit_stack soft ",
		"--cgroup_mem_max 536870912 --cgroup_mem_mount /cg/memory --cgroup_mem_parent " + nsjailCgroupParent,
		"--cgroup_pids_max 256 --cgroup_pids_mount /cg/pids", "--cgroup_cpu_ms_per_sec 1000 --cgroup_cpu_mount /cg/cpu",
		"-E HOME=/workspace -E PATH=/usr/bin ", "-R " + root + "/usr:/usr -s usr/bin:/bin --proc_path /proc ",
		"-m none:/dev:tmpfs:mode=0755 -B /dev/null:/dev/null", "-m none:/dev/shm:tmpfs:mode=1777 ",
		"-m none:/tmp:tmpfs:size=268435456,mode=1777 ", "-s ../proc/self/mounts:/etc/mtab -B " + root + "/ws:/workspace ",
		"--seccomp_string ERRNO(1) {", "} DEFAULT ALLOW -- bash -c true",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("nsjail arguments lack %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "--disable_proc") || strings.Contains(got, "lib32") {
		t.Errorf("nsjail arguments: %s", got)
	}
	unpriv := strings.Join(nsjailArgs(c, ms, cgroup.Host{Version: cgroup.V2}, 1234, 1235), " ")
	if !strings.Contains(unpriv, "-u 1000:1234 -g 1000:1235 ") || !strings.Contains(unpriv, "--use_cgroupv2 --cgroup_mem_max 536870912 --cgroup_pids_max") {
		t.Errorf("nsjail arguments for an unprivileged caller on v2: %s", unpriv)
	}
}

func TestProfileConfigAgent(t *testing.T) {
	ws := t.TempDir()
	c, err := profileConfig("agent", ws, agentArgs)
	if err != nil {
		t.Fatal(err)
	}
	if c.Dir != "/workspace" || !slices.Equal(c.Argv, agentArgs) {
		t.Errorf("agent config: dir %q, argv %q", c.Dir, c.Argv)
	}
	if !slices.ContainsFunc(c.Mounts, func(s mount.Spec) bool { return s.Kind == mount.Bind && s.Src == ws && s.Dst == "/workspace" }) {
		t.Errorf("agent config mounts no workspace %s: %+v", ws, c.Mounts)
	}
	if !slices.ContainsFunc(c.Mounts, func(s mount.Spec) bool { return s.Kind == mount.File && s.Dst == "/etc/passwd" }) {
		t.Errorf("agent config generates no /etc/passwd: %+v", c.Mounts)
	}
}

func TestParseFlagsAgent(t *testing.T) {
	c, err := parseFlags(nil)
	if err != nil {
		t.Fatal(err)
	}
	if c.only != "" || c.idle != 150*time.Millisecond || c.agentWarmup != 3 || c.agentRounds != 30 || c.seed != 0 {
		t.Errorf("agent defaults = %+v", c)
	}
	if c, err := parseFlags([]string{"-only", "agent", "-idle", "0s", "-seed", "9"}); err != nil || c.only != onlyAgent || c.idle != 0 || c.seed != 9 {
		t.Errorf("parseFlags(-only agent -idle 0s -seed 9) = %+v, %v", c, err)
	}
	for _, args := range [][]string{{"-only", "network"}, {"-only", "agent", "-agent-rounds", "0"},
		{"-idle", "-1s"}, {"-agent-warmup", "-1"}, {"-agent-rounds", "-1"}} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("parseFlags(%q): no error", args)
		}
	}
}

func TestCommandLine(t *testing.T) {
	got := commandLine(launcher{Argv: []string{"/bin/codex", "sandbox", "--", "bash", "-c", "true"}, Env: []string{"A=b c"}, Dir: "/w s"})
	if want := `cd '/w s' && 'A=b c' /bin/codex sandbox -- bash -c true`; got != want {
		t.Errorf("commandLine = %s, want %s", got, want)
	}
}
