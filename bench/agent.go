// The agent's path: tool calls spaced as an agent makes them (the model
// thinks between two, so each call starts on an idle host), `bash -c true`
// with a workspace, through jail's agent launchers, bubblewrap with the
// same binds, and the sandboxes agents use today when installed (peers.go).
// Each round runs every launcher once in a fresh random order, so that no
// launcher always follows another; a call is timed from fork to the
// launcher's exit, as the agent waits for it.
package main

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/internal/stats"
	"github.com/jail-sandbox/jail/jail"
	hostsetup "github.com/jail-sandbox/jail/setup"
)

// agentShellCommand is what each call's shell runs: nothing, so that the
// time is the launcher's.
const agentShellCommand = "true"

// outputCommand is what the pair that weighs the output cap runs: 64 KiB
// of output, what a verbose tool call prints (a builtin: no PATH needed).
var outputCommand = []string{"--", "bash", "-c", "printf '%65536s' ''"}

// agentArgs is the command every launcher runs, as an agent's bash tool
// gives it.
var agentArgs = []string{"bash", "-c", agentShellCommand}

// onlyAgent is -only's value for the agent mode alone.
const onlyAgent = "agent"

// AgentPart is the agent mode's figures and what they were taken on.
type AgentPart struct {
	Command string  `json:"command"`
	IdleMs  float64 `json:"idle_ms"`
	Warmup  int     `json:"warmup_rounds"`
	Rounds  int     `json:"rounds"`
	Seed    uint64  `json:"seed"`
	// CgroupVersion is the host's (v1, v2, none); FavorDynMods whether a
	// cgroup mount has favordynmods, which FavorDynModsMount names.
	CgroupVersion     string        `json:"cgroup_version"`
	FavorDynMods      bool          `json:"favordynmods"`
	FavorDynModsMount string        `json:"favordynmods_mount,omitempty"`
	Workspace         string        `json:"workspace"`
	JailWorkspace     string        `json:"jail_workspace"`
	Launchers         []AgentResult `json:"launchers"`
	// SessionWorkspace* are jail-session/jail-workspace: the ratio of the
	// medians and the median of the per-round ratios.
	SessionWorkspaceMedian float64 `json:"session_workspace_median_ratio"`
	SessionWorkspaceRound  float64 `json:"session_workspace_round_ratio"`
	// Relay* are output-capped/output-uncapped: what the agent profile's
	// output cap costs a call that prints (the runner relays the output).
	RelayMedian float64 `json:"relay_median_ratio"`
	RelayRound  float64 `json:"relay_round_ratio"`
	Seconds     float64 `json:"seconds"`
}

// AgentResult is one launcher of the agent mode: its command line and
// figures, or why it has none (Status "not installed" or "failed").
type AgentResult struct {
	Name      string       `json:"name"`
	Command   string       `json:"command"`
	Version   string       `json:"version,omitempty"`
	Isolation string       `json:"isolation,omitempty"`
	Status    string       `json:"status"`
	Error     string       `json:"error,omitempty"`
	Stats     *stats.Stats `json:"stats,omitempty"`
	SamplesMs []float64    `json:"samples_ms,omitempty"`
	// BwrapMedian is the ratio of its median to bwrap's; BwrapRound the
	// median of its per-round ratios to bwrap.
	BwrapMedian float64 `json:"bwrap_median_ratio,omitempty"`
	BwrapRound  float64 `json:"bwrap_round_ratio,omitempty"`
}

// Statuses of an AgentResult.
const (
	statusMeasured     = "measured"
	statusNotInstalled = "not installed"
	statusFailed       = "failed"
)

// agentLauncher is a launcher of the agent mode and what the report says
// of it.
type agentLauncher struct {
	launcher
	// peer: a sandbox other than jail and bwrap; failing to run is
	// reported, not the bench's failure.
	peer      bool
	isolation string
	version   string
	missing   string // why it is not run: not installed
	// session is the jail session its calls make, removed after.
	session string
	// cleanup is a directory of its own to remove after.
	cleanup string
}

// agentEnv is what the agent mode's launchers share: the host's cgroups,
// the workspaces, the scratch directory and the agent profile's run
// configuration.
type agentEnv struct {
	host      cgroup.Host
	dir       string // holds the rest; removed after
	workspace string // the caller's
	jailWS    string // owned by the jail's host uid
	scratch   string
	config    jail.Config
	mounts    []hostMount
}

// agentPart runs the agent mode with jail and bwrap at the given paths,
// printing to w; it returns the figures and what could not be measured.
func agentPart(cfg config, w io.Writer, jailExe, bwrapExe string) (AgentPart, []string, error) {
	start := time.Now()
	seed := cfg.seed
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	part := AgentPart{Command: shellQuote(agentArgs), IdleMs: cfg.idle.Seconds() * 1000,
		Warmup: cfg.agentWarmup, Rounds: cfg.agentRounds, Seed: seed}
	env, err := newAgentEnv()
	if err != nil {
		return part, nil, err
	}
	defer os.RemoveAll(env.dir)
	part.CgroupVersion = env.host.Version.String()
	part.FavorDynModsMount, err = hostsetup.FavorDynModsOn("/proc/self/mountinfo")
	part.FavorDynMods = part.FavorDynModsMount != ""
	if err != nil {
		return part, nil, err
	}
	part.Workspace, part.JailWorkspace = env.workspace, env.jailWS

	ls, err := agentLaunchers(env, jailExe, bwrapExe)
	defer removeLauncherDirs(ls)
	if err != nil {
		return part, nil, err
	}
	// nsjail's parent cgroups (v1), made before its first call.
	var cgDirs []string
	if slices.ContainsFunc(ls, func(l agentLauncher) bool { return l.Name == "nsjail" && l.missing == "" }) {
		if cgDirs, err = nsjailCgroupDirs(env.host); err != nil {
			removeDirs(cgDirs)
			return part, nil, err
		}
	}
	printAgentHeader(w, part, ls)

	c, err := newCaller(cfg.timeout)
	if err != nil {
		removeDirs(cgDirs)
		return part, nil, err
	}
	defer c.Close()
	var run []launcher
	for _, l := range ls {
		if l.missing == "" {
			run = append(run, l.launcher)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	byName := map[string]spaced{}
	for i, s := range spacedRounds(c, run, cfg.agentWarmup, cfg.agentRounds, cfg.idle, rng) {
		byName[run[i].Name] = s
	}
	var failed []string
	part.Launchers, failed = agentResults(ls, byName)
	failed = append(failed, removeSessions(jailExe, ls, byName)...)
	failed = append(failed, removeDirs(cgDirs)...)
	part.SessionWorkspaceMedian, part.SessionWorkspaceRound = pairRatios(byName, "jail-session", "jail-workspace")
	part.RelayMedian, part.RelayRound = pairRatios(byName, "output-capped", "output-uncapped")
	part.Seconds = time.Since(start).Seconds()
	printAgent(w, part)
	return part, failed, nil
}

// newAgentEnv makes the workspaces and reads the host and the agent
// profile.
func newAgentEnv() (agentEnv, error) {
	var e agentEnv
	var err error
	if e.host, err = cgroup.Detect(); err != nil {
		return e, err
	}
	if e.dir, err = os.MkdirTemp("", "jail-bench-agent-*"); err != nil {
		return e, err
	}
	fail := func(err error) (agentEnv, error) {
		os.RemoveAll(e.dir)
		return e, err
	}
	// The generated files in scratch are bound by sandboxes that map the
	// caller to another uid (nsjail, as jail does): they must reach them.
	if err := os.Chmod(e.dir, 0o755); err != nil {
		return fail(err)
	}
	e.workspace, e.jailWS, e.scratch = filepath.Join(e.dir, "workspace"), filepath.Join(e.dir, "jail-workspace"), filepath.Join(e.dir, "scratch")
	for _, d := range []string{e.workspace, e.jailWS, e.scratch} {
		if err := os.Mkdir(d, 0o700); err != nil {
			return fail(err)
		}
	}
	if err := os.Chmod(e.scratch, 0o755); err != nil {
		return fail(err)
	}
	if e.config, err = profileConfig("agent", e.workspace, agentArgs); err != nil {
		return fail(err)
	}
	// jail refuses a root caller's workspace that root owns: what the
	// jail writes there would be root's.
	if os.Geteuid() == 0 {
		if err := os.Chown(e.jailWS, int(e.config.HostUID), int(e.config.HostGID)); err != nil {
			return fail(fmt.Errorf("jail's workspace: %w", err))
		}
	}
	if e.mounts, err = hostMounts(e.config.Mounts, "/", e.scratch); err != nil {
		return fail(err)
	}
	return e, nil
}

// agentLaunchers builds every launcher of the agent mode, in report order:
// jail's five, the output cap's pair, bwrap, then the peers (missing ones
// marked).
func agentLaunchers(e agentEnv, jailExe, bwrapExe string) ([]agentLauncher, error) {
	jailSh, err := jailShell(jailExe, e.scratch)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("bench-%d-%d", os.Getpid(), time.Now().UnixNano())
	ws := []string{"-p", "agent", "--workspace", e.jailWS}
	lifted := []string{"--memory", "unlimited", "--pids", "unlimited", "--cpu", "unlimited"}
	cmd := append([]string{"--"}, agentArgs...)
	ls := []agentLauncher{
		{launcher: launcher{Name: "jail-workspace", Argv: slices.Concat([]string{jailExe}, ws, cmd)}},
		{launcher: launcher{Name: "jail-session", Argv: slices.Concat([]string{jailExe, "-p", "agent", "--session", id + "-session"}, cmd)},
			session: id + "-session"},
		{launcher: launcher{Name: "jail-sh", Argv: []string{jailSh, "-c", agentShellCommand}, Env: []string{"JAIL_SESSION=" + id + "-sh"}},
			session: id + "-sh"},
		{launcher: launcher{Name: "jail-nocgroup", Argv: slices.Concat([]string{jailExe}, ws, lifted, cmd)}},
		{launcher: launcher{Name: "session-nocgroup", Argv: slices.Concat([]string{jailExe, "-p", "agent", "--session", id + "-nocg"}, lifted, cmd)},
			session: id + "-nocg"},
		{launcher: launcher{Name: "output-capped", Argv: slices.Concat([]string{jailExe}, ws, outputCommand)}},
		{launcher: launcher{Name: "output-uncapped", Argv: slices.Concat([]string{jailExe}, ws, []string{"--max-output", "unlimited"}, outputCommand)}},
		{launcher: launcher{Name: "bwrap", Argv: append([]string{bwrapExe}, bwrapConfigArgs(e.config, e.mounts)...)}},
	}
	for _, p := range peers {
		l, err := peerLauncher(p, e)
		ls = append(ls, l)
		if err != nil {
			return ls, err
		}
	}
	return ls, nil
}

// jailShell returns the jail-sh next to jailExe (make build puts it there),
// or else a link of that name to jailExe made in dir.
func jailShell(jailExe, dir string) (string, error) {
	sibling := filepath.Join(filepath.Dir(jailExe), "jail-sh")
	if _, err := os.Stat(sibling); err == nil {
		return sibling, nil
	}
	link := filepath.Join(dir, "jail-sh")
	if err := os.Symlink(jailExe, link); err != nil {
		return "", fmt.Errorf("jail-sh: %w", err)
	}
	return link, nil
}

// spaced is one launcher's outcome in spacedRounds.
type spaced struct {
	samples []time.Duration // one per measured round
	calls   int             // calls that succeeded, warm-up included
	err     error           // the call that failed; none after it
}

// spacedRounds runs warmup+rounds rounds; in each, every launcher still
// running makes one call, in an order rng draws afresh, each call after
// idle. The warm-up rounds' times are dropped. A launcher whose call fails
// makes no more; its error is kept.
func spacedRounds(c *caller, ls []launcher, warmup, rounds int, idle time.Duration, rng *rand.Rand) []spaced {
	res := make([]spaced, len(ls))
	for round := range warmup + rounds {
		for _, i := range rng.Perm(len(ls)) {
			if res[i].err != nil {
				continue
			}
			time.Sleep(idle)
			d, err := c.call(ls[i])
			if err != nil {
				res[i].err = err
				continue
			}
			res[i].calls++
			if round >= warmup {
				res[i].samples = append(res[i].samples, d)
			}
		}
	}
	return res
}

// agentResults summarises each launcher's outcome (byName holds the run
// ones') and returns, besides, the failures that are the bench's: jail's
// and bwrap's.
func agentResults(ls []agentLauncher, byName map[string]spaced) ([]AgentResult, []string) {
	var out []AgentResult
	var failed []string
	for _, l := range ls {
		r := AgentResult{Name: l.Name, Command: commandLine(l.launcher), Version: l.version, Isolation: l.isolation}
		s := byName[l.Name]
		switch {
		case l.missing != "":
			r.Status, r.Error = statusNotInstalled, l.missing
		case s.err != nil:
			r.Status, r.Error = statusFailed, s.err.Error()
			if !l.peer {
				failed = append(failed, "agent mode: "+s.err.Error())
			}
		default:
			st := stats.Summarize(s.samples)
			r.Status, r.Stats, r.SamplesMs = statusMeasured, &st, roundAll(stats.Millis(s.samples), 3)
			r.BwrapMedian, r.BwrapRound = pairRatios(byName, l.Name, "bwrap")
		}
		out = append(out, r)
	}
	return out, failed
}

// pairRatios returns a/b for two launchers that ran every round: the ratio
// of their medians and the median of their per-round ratios (0, 0 when
// either failed).
func pairRatios(byName map[string]spaced, a, b string) (float64, float64) {
	sa, oka := byName[a]
	sb, okb := byName[b]
	if !oka || !okb || sa.err != nil || sb.err != nil {
		return 0, 0
	}
	return stats.Ratio(stats.Summarize(sa.samples).Median, stats.Summarize(sb.samples).Median), roundRatio(sa.samples, sb.samples)
}

// roundRatio is the median over rounds of a[r]/b[r].
func roundRatio(a, b []time.Duration) float64 {
	n := min(len(a), len(b))
	if n == 0 {
		return 0
	}
	rs := make([]float64, n)
	for r := range n {
		rs[r] = stats.Ratio(float64(a[r]), float64(b[r]))
	}
	slices.Sort(rs)
	return stats.Median(rs)
}

// removeSessions removes the sessions the launchers' calls made, with
// `jail sessions rm`, and returns what could not be removed.
func removeSessions(jailExe string, ls []agentLauncher, byName map[string]spaced) []string {
	var failed []string
	for _, l := range ls {
		if l.session == "" || byName[l.Name].calls == 0 {
			continue
		}
		if out, err := runCombined(jailExe, "sessions", "rm", l.session); err != nil {
			failed = append(failed, fmt.Sprintf("agent mode: jail sessions rm %s: %v: %s", l.session, err, out))
		}
	}
	return failed
}

// runCombined runs exe with args, giving up after 10 s, and returns what
// it printed.
func runCombined(exe string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, exe, args...).CombinedOutput()
	return strings.TrimSpace(string(out)), err
}

// removeLauncherDirs removes the launchers' own directories.
func removeLauncherDirs(ls []agentLauncher) {
	for _, l := range ls {
		if l.cleanup != "" {
			os.RemoveAll(l.cleanup)
		}
	}
}

// removeDirs removes the directories dirs, last first, and returns what it
// could not remove.
func removeDirs(dirs []string) []string {
	var failed []string
	for _, d := range slices.Backward(dirs) {
		if err := os.Remove(d); err != nil {
			failed = append(failed, "agent mode: "+err.Error())
		}
	}
	return failed
}
