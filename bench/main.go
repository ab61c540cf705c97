// Command bench measures what jail costs per call: it launches /bin/true
// directly (the floor), through `jail -p default --`, and through bubblewrap
// with the same isolation as jail's default profile, side by side in one run,
// and reports per-call latency, parallel throughput and the jail/bwrap ratios
// (the performance budget in DESIGN.md: ratio of medians ≤ 1.00, ratio of
// throughputs ≥ 1.00). It also launches `jail -p default --seccomp none`, to
// show what the seccomp filter adds to a call (its compiled program cached),
// and with its cgroup limits lifted, to show what the run's cgroup costs
// (create, limit, join, measure, remove), and times a first-time compile of the default policy separately.
// With --allow and no connection made it shows what the allowlist network
// costs a call (target ≤ 1.05× of jail, one at a time and 8 at once), and
// through the allowlist's user-space stack a 100 MB download (rate against
// the same curl on the host, target ≥ 0.5×) and one small HTTPS request's
// latency, from servers of its own on the host's loopback (network.go).
// Last, the agent mode (agent.go) times `bash -c true` with a workspace as
// an agent calls it, each call after an idle pause, through jail's agent
// launchers, bubblewrap with the same binds and, when installed, nsjail,
// Anthropic's sandbox runtime and Codex's sandbox (peers.go). A figure that
// cannot be measured is named and the rest still reported; the bench then
// exits 1.
//
// Usage (from the module root, after building the jail binary):
//
//	go run ./bench -jail ./jail [-n 50] [-parallel 8] [-duration 3s] [-json FILE]
//	    [-download-mb 100] [-net-runs 5] [-https-runs 20]
//	    [-only agent] [-idle 150ms] [-agent-warmup 3] [-agent-rounds 30] [-seed N]
//
// It installs nothing: bwrap and curl must be on PATH (`make bench`
// installs them; `make bench PEERS=1` also srt and codex).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
)

// target is the command every launcher runs.
const target = "/bin/true"

// minRuns is the fewest measured calls per launcher that -n accepts.
const minRuns = 30

// throughputRounds is how many bursts each jail and bwrap get, alternated.
const throughputRounds = 2

// config is the bench's settings, from the command line.
type config struct {
	jail     string
	runs     int
	warmup   int
	parallel int
	duration time.Duration
	timeout  time.Duration
	jsonPath string
	// The network figures: the download's size, and runs of each.
	downloadMB int
	netRuns    int
	httpsRuns  int
	// only is "" for every part, onlyAgent for the agent mode alone.
	only string
	// The agent mode: idle before each call, rounds, and the seed of
	// each round's order (0: from the clock).
	idle        time.Duration
	agentWarmup int
	agentRounds int
	seed        uint64
}

func main() {
	cfg, err := parseFlags(os.Args[1:])
	if err == nil {
		err = run(cfg, os.Stdout)
	}
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

// parseFlags reads the command line into a config and checks it.
func parseFlags(args []string) (config, error) {
	var c config
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.StringVar(&c.jail, "jail", "./jail", "the jail `binary` to measure")
	fs.IntVar(&c.runs, "n", 50, fmt.Sprintf("measured calls per launcher (at least %d)", minRuns))
	fs.IntVar(&c.warmup, "warmup", 10, "warm-up calls per launcher, not counted")
	fs.IntVar(&c.parallel, "parallel", 8, "concurrent workers for the throughput test")
	fs.DurationVar(&c.duration, "duration", 3*time.Second, "length of each throughput burst")
	fs.DurationVar(&c.timeout, "timeout", 10*time.Second, "kill a call that takes longer than this")
	fs.StringVar(&c.jsonPath, "json", "", "also write every figure as JSON to `FILE`")
	fs.IntVar(&c.downloadMB, "download-mb", 100, "size in MiB of the download through the network stack")
	fs.IntVar(&c.netRuns, "net-runs", 5, "measured downloads, on the host and through the stack each")
	fs.IntVar(&c.httpsRuns, "https-runs", 20, "measured HTTPS requests, on the host and through the stack each")
	fs.StringVar(&c.only, "only", "", "run only one part: `agent` (the agent's path); default every part")
	fs.DurationVar(&c.idle, "idle", 150*time.Millisecond, "agent mode: idle before each call (the model thinking)")
	fs.IntVar(&c.agentWarmup, "agent-warmup", 3, "agent mode: warm-up rounds, not counted")
	fs.IntVar(&c.agentRounds, "agent-rounds", 30, "agent mode: measured rounds, each launcher once a round; 0 leaves the mode out")
	fs.Uint64Var(&c.seed, "seed", 0, "agent mode: seed of each round's random order (0: from the clock)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	case c.runs < minRuns:
		return c, fmt.Errorf("-n %d: at least %d calls per launcher are needed for a p95", c.runs, minRuns)
	case c.warmup < 0:
		return c, fmt.Errorf("-warmup %d: must not be negative", c.warmup)
	case c.parallel < 1:
		return c, fmt.Errorf("-parallel %d: at least 1 worker is needed", c.parallel)
	case c.duration <= 0 || c.timeout <= 0:
		return c, errors.New("-duration and -timeout must be positive")
	case c.downloadMB < 1 || c.netRuns < 1 || c.httpsRuns < 1:
		return c, errors.New("-download-mb, -net-runs and -https-runs must be at least 1")
	case c.only != "" && c.only != onlyAgent:
		return c, fmt.Errorf("-only %s: the only part that runs alone is %q", c.only, onlyAgent)
	case c.idle < 0 || c.agentWarmup < 0 || c.agentRounds < 0:
		return c, errors.New("-idle, -agent-warmup and -agent-rounds must not be negative")
	case c.only == onlyAgent && c.agentRounds == 0:
		return c, errors.New("-only agent with -agent-rounds 0: nothing to run")
	}
	return c, nil
}

// Report holds every figure of one bench run; -json writes it.
type Report struct {
	Time       string       `json:"time"`
	Host       Host         `json:"host"`
	Target     string       `json:"target"`
	Launchers  []Launcher   `json:"launchers"`
	Latency    LatencyPart  `json:"latency"`
	Throughput ThroughPart  `json:"throughput"`
	Seccomp    SeccompPart  `json:"seccomp"`
	Network    NetworkPart  `json:"network"`
	Agent      *AgentPart   `json:"agent,omitempty"`
	Targets    TargetValues `json:"targets"`
	// Failed names each figure that could not be measured, and why.
	Failed []string `json:"failed,omitempty"`
}

// Host describes the machine and the two sandboxes under test.
type Host struct {
	Kernel       string `json:"kernel"`
	CPUs         int    `json:"cpus"`
	Jail         string `json:"jail"`
	JailVersion  string `json:"jail_version"`
	Bwrap        string `json:"bwrap"`
	BwrapVersion string `json:"bwrap_version"`
}

// Launcher is one way of running the target, with its exact command line.
type Launcher struct {
	Name    string   `json:"name"`
	Argv    []string `json:"argv"`
	Command string   `json:"command"`
}

// LatencyPart is the sequential per-call measurement.
type LatencyPart struct {
	Warmup          int                    `json:"warmup_calls"`
	Stats           map[string]stats.Stats `json:"stats"`
	SamplesMs       map[string][]float64   `json:"samples_ms"`
	JailBwrapMedian float64                `json:"jail_bwrap_median_ratio"`
	JailBwrapP95    float64                `json:"jail_bwrap_p95_ratio"`
	// FilterMedian is the jail/jail-nofilter ratio of the medians: what
	// loading the (cached) seccomp program adds to a call.
	FilterMedian float64 `json:"filter_median_ratio"`
	// CgroupMedianMs and CgroupP95Ms are what the run's cgroup adds
	// (jail minus jail-nocgroup), CgroupMedian the ratio of the medians.
	CgroupMedianMs float64 `json:"cgroup_median_ms"`
	CgroupP95Ms    float64 `json:"cgroup_p95_ms"`
	CgroupMedian   float64 `json:"jail_nocgroup_median_ratio"`
	// AllowlistMedian is jail-allowlist/jail of the medians: what the
	// allowlist network mode costs a call that makes no connection.
	AllowlistMedian float64 `json:"allowlist_median_ratio"`
}

// ThroughPart is the parallel calls-per-second measurement.
type ThroughPart struct {
	Workers        int          `json:"workers"`
	BurstSeconds   float64      `json:"burst_seconds"`
	Results        []Throughput `json:"results"`
	JailBwrapRatio float64      `json:"jail_bwrap_ratio"`
	// AllowlistRatio is jail-allowlist/jail of calls per second.
	AllowlistRatio float64 `json:"allowlist_jail_ratio"`
}

// TargetValues are the budget's goals for the ratios.
type TargetValues struct {
	MedianRatioMax     float64 `json:"median_ratio_max"`
	P95RatioMax        float64 `json:"p95_ratio_max"`
	ThroughputRatioMin float64 `json:"throughput_ratio_min"`
	// AllowlistRatioMax bounds jail-allowlist/jail of the medians (and
	// its inverse, of calls per second).
	AllowlistRatioMax float64 `json:"allowlist_ratio_max"`
	DownloadRatioMin  float64 `json:"download_ratio_min"`
}

// run does the whole bench and prints it to w.
func run(cfg config, w io.Writer) error {
	ls, host, err := setup(cfg)
	if err != nil {
		return err
	}
	rep := Report{
		Time:   time.Now().UTC().Format(time.RFC3339),
		Host:   host,
		Target: target,
		// Issue 14's back-to-back targets: median ≤ 0.7, p95 ≤ 1.0,
		// 8-way throughput ≥ 1.3 of bubblewrap's.
		Targets: TargetValues{MedianRatioMax: 0.7, P95RatioMax: 1, ThroughputRatioMin: 1.3,
			AllowlistRatioMax: 1.05, DownloadRatioMin: 0.5},
	}
	if cfg.only == onlyAgent {
		fmt.Fprintln(w, "jail bench: the agent mode only")
		printHost(w, rep.Host)
		rep.Agent, rep.Failed = agentStep(cfg, w, rep.Host)
		return finish(cfg, w, rep)
	}
	for _, l := range ls {
		rep.Launchers = append(rep.Launchers, Launcher{Name: l.Name, Argv: l.Argv, Command: shellQuote(l.Argv)})
	}
	printHeader(w, rep)

	cs, err := newCallers(cfg.parallel, cfg.timeout)
	if err != nil {
		return err
	}
	defer closeCallers(cs)

	// The allowlist launcher needs what the others do not (a TUN device):
	// when it cannot run, the bench says so and measures the rest.
	if _, err := cs[0].call(ls[len(ls)-1]); err != nil {
		rep.Failed = append(rep.Failed, "jail-allowlist (latency and throughput): "+err.Error())
		fmt.Fprintf(w, "\njail-allowlist FAILED, left out of latency and throughput: %v\n", err)
		ls = ls[:len(ls)-1]
	}

	fmt.Fprintf(w, "\nlatency: %d warm-up + %d measured calls each, alternating %s …\n",
		cfg.warmup, cfg.runs, names(ls))
	if rep.Latency, err = latencyPart(cs[0], ls, cfg); err != nil {
		return err
	}
	printLatency(w, ls, rep.Latency, rep.Targets)

	sandboxes := ls[1:3] // jail, bwrap, and jail-allowlist when it runs
	if ls[len(ls)-1].Name == "jail-allowlist" {
		sandboxes = []launcher{ls[1], ls[2], ls[len(ls)-1]}
	}
	fmt.Fprintf(w, "\nthroughput: %d workers at once, %d bursts of %v each, alternating %s …\n",
		cfg.parallel, throughputRounds, cfg.duration, names(slices.Repeat(sandboxes, throughputRounds)))
	if rep.Throughput, err = throughputPart(cs, sandboxes, cfg); err != nil {
		return err
	}
	printThroughput(w, rep.Throughput, rep.Targets)

	fmt.Fprintf(w, "\nseccomp: %d first-time compiles of the %s policy (what a cache miss adds) …\n", compileRuns, compiledPolicy)
	if rep.Seccomp, err = seccompPart(); err != nil {
		return err
	}
	printSeccomp(w, rep.Seccomp)

	fmt.Fprintf(w, "\nnetwork: through the allowlist's stack (jail-stack) and on the host, alternating, from servers on 127.0.0.1 …\n")
	var failed []string
	rep.Network, failed = networkPart(cfg)
	rep.Failed = append(rep.Failed, failed...)
	printNetwork(w, rep.Network, rep.Targets)
	if cfg.agentRounds > 0 {
		rep.Agent, failed = agentStep(cfg, w, rep.Host)
		rep.Failed = append(rep.Failed, failed...)
	}
	return finish(cfg, w, rep)
}

// agentStep runs the agent mode with host's jail and bwrap; it returns
// the figures and what it could not measure (all of it, named, when the
// mode cannot start).
func agentStep(cfg config, w io.Writer, host Host) (*AgentPart, []string) {
	part, failed, err := agentPart(cfg, w, host.Jail, host.Bwrap)
	if err != nil {
		fmt.Fprintf(w, "\nagent mode FAILED: %v\n", err)
		return nil, []string{"agent mode: " + err.Error()}
	}
	return &part, failed
}

// finish writes the JSON report and names the figures that could not be
// measured (then errFigures).
func finish(cfg config, w io.Writer, rep Report) error {
	if err := writeJSON(cfg.jsonPath, rep); err != nil {
		return err
	}
	if len(rep.Failed) > 0 {
		fmt.Fprintln(w, "\nfigures that could not be measured:")
		for _, f := range rep.Failed {
			first, _, _ := strings.Cut(f, "\n")
			fmt.Fprintf(w, "  %s\n", first)
		}
		return errFigures
	}
	return nil
}

// setup finds the binaries and builds the launchers: true, jail, bwrap,
// jail-nofilter, jail-nocgroup and jail-allowlist.
func setup(cfg config) ([]launcher, Host, error) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return nil, Host{}, errors.New("bwrap not found on PATH; install bubblewrap (apt-get install -y bubblewrap) or run `make bench`")
	}
	jail, err := resolveExe(cfg.jail)
	if err != nil {
		return nil, Host{}, err
	}
	bargs, err := bwrapArgs("/", []string{target})
	if err != nil {
		return nil, Host{}, err
	}
	ls := []launcher{
		{Name: "true", Argv: []string{target}},
		{Name: "jail", Argv: []string{jail, "-p", "default", "--", target}},
		{Name: "bwrap", Argv: append([]string{bwrap}, bargs...)},
		{Name: "jail-nofilter", Argv: []string{jail, "-p", "default", "--seccomp", "none", "--", target}},
		{Name: "jail-nocgroup", Argv: []string{jail, "-p", "default", "--memory", "unlimited", "--pids", "unlimited", "--cpu", "unlimited", "--", target}},
		{Name: "jail-allowlist", Argv: []string{jail, "-p", "default", "--allow", "example.com", "--", target}},
	}
	host := Host{
		Kernel:       kernelRelease(),
		CPUs:         runtime.NumCPU(),
		Jail:         jail,
		JailVersion:  version(jail, "version"),
		Bwrap:        bwrap,
		BwrapVersion: version(bwrap, "--version"),
	}
	return ls, host, nil
}

// resolveExe returns the absolute path of the executable file p (looked up
// on PATH when it has no slash), or an error saying what is wrong with it.
func resolveExe(p string) (string, error) {
	if !strings.Contains(p, "/") {
		found, err := exec.LookPath(p)
		if err != nil {
			return "", fmt.Errorf("-jail %s: not found on PATH", p)
		}
		p = found
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("-jail %s: %w", p, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case err != nil:
		return "", fmt.Errorf("-jail %s: %w (build the jail binary first)", p, err)
	case fi.IsDir():
		return "", fmt.Errorf("-jail %s: is a directory, not the jail binary (build it, then pass -jail PATH)", p)
	case fi.Mode()&0o111 == 0:
		return "", fmt.Errorf("-jail %s: not executable", p)
	}
	return abs, nil
}

// kernelRelease returns the running kernel's release, like uname -r.
func kernelRelease() string {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	return strings.TrimSpace(string(b))
}

// version runs `exe arg` and returns the first line it prints, or why it
// gave none. It gives up after 5 s.
func version(exe, arg string) string { return versionWith(nil, exe, arg) }

// versionWith is version with env added to the environment.
func versionWith(env []string, exe, arg string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, exe, arg)
	if len(env) > 0 {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.WaitDelay = time.Second // do not wait on pipes held by grandchildren
	out, err := cmd.CombinedOutput()
	line, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	switch {
	case err != nil && line != "":
		return fmt.Sprintf("(no answer to %q: %v: %s)", arg, err, line)
	case err != nil:
		return fmt.Sprintf("(no answer to %q: %v)", arg, err)
	case line == "":
		return fmt.Sprintf("(no answer to %q: printed nothing)", arg)
	}
	return line
}
