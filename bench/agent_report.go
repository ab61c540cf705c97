// The agent mode's printed report: what it ran on and how, the exact
// command lines, then each launcher's figures against bubblewrap's.
package main

import (
	"fmt"
	"io"
	"strings"
)

// printAgentHeader prints the mode's settings, the host's cgroup state
// and every launcher's command line (or why it does not run).
func printAgentHeader(w io.Writer, p AgentPart, ls []agentLauncher) {
	fmt.Fprintf(w, "\nagent mode: `%s` with a workspace, %.0f ms idle before each call (the model thinking),\n", p.Command, p.IdleMs)
	fmt.Fprintf(w, "  %d warm-up + %d measured rounds, each launcher once a round in a fresh random order (seed %d)\n",
		p.Warmup, p.Rounds, p.Seed)
	fmt.Fprintf(w, "  cgroup %s, favordynmods %s\n", p.CgroupVersion, favorDynModsWords(p))
	fmt.Fprintf(w, "  workspace %s; jail's %s (its host uid's, as jail requires)\n", p.Workspace, p.JailWorkspace)
	fmt.Fprintln(w, "command lines:")
	for _, l := range ls {
		if l.missing != "" {
			fmt.Fprintf(w, "  %-16s not installed: %s\n", l.Name, l.missing)
			continue
		}
		fmt.Fprintf(w, "  %-16s %s\n", l.Name, commandLine(l.launcher))
		if l.version != "" {
			fmt.Fprintf(w, "  %-16s   [%s]\n", "", l.version)
		}
		if l.isolation != "" {
			fmt.Fprintf(w, "  %-16s   isolates: %s\n", "", l.isolation)
		}
	}
}

// favorDynModsWords says whether favordynmods is on, and what that means
// for a spaced call on this host.
func favorDynModsWords(p AgentPart) string {
	switch {
	case p.FavorDynMods:
		return "on (" + p.FavorDynModsMount + ")"
	case p.CgroupVersion == "v1":
		return "off: moving each run into its cgroup waits for an RCU grace period on an idle host"
	}
	return "off (a v1 setting: a v2 run starts inside its cgroup)"
}

// relayRatioMax is what the output cap may cost a call that prints
// (issue 16): the relay's copies through the runner.
const relayRatioMax = 1.05

// printAgent prints each launcher's figures and the ratios.
func printAgent(w io.Writer, p AgentPart) {
	fmt.Fprintf(w, "  %-16s %8s %8s %8s %5s %8s %9s   (ms per call)\n", "launcher", "median", "p95", "min", "runs", "×bwrap", "per round")
	for _, r := range p.Launchers {
		switch r.Status {
		case statusMeasured:
			fmt.Fprintf(w, "  %-16s %8.2f %8.2f %8.2f %5d %8s %9s\n", r.Name, r.Stats.Median, r.Stats.P95, r.Stats.Min, r.Stats.Runs,
				ratioWord(r.BwrapMedian), ratioWord(r.BwrapRound))
		case statusNotInstalled:
			fmt.Fprintf(w, "  %-16s not installed\n", r.Name)
		default:
			first, _, _ := strings.Cut(r.Error, "\n")
			fmt.Fprintf(w, "  %-16s FAILED: %s\n", r.Name, first)
		}
	}
	fmt.Fprintln(w, "  ×bwrap: the ratio of the medians; per round: the median of each round's ratio")
	fmt.Fprintf(w, "  ratio jail-session/jail-workspace: %s of the medians, %s per round\n",
		ratioWord(p.SessionWorkspaceMedian), ratioWord(p.SessionWorkspaceRound))
	fmt.Fprintf(w, "  ratio output-capped/output-uncapped (64 KiB printed, relayed under the agent profile's 1M cap): %s of the medians, %s per round   %s\n",
		ratioWord(p.RelayMedian), ratioWord(p.RelayRound), verdict(p.RelayMedian > 0 && p.RelayMedian <= relayRatioMax, "≤", relayRatioMax))
	fmt.Fprintf(w, "  the agent mode took %.1f s\n", p.Seconds)
}

// ratioWord prints a ratio, or "-" when there is none.
func ratioWord(r float64) string {
	if r == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", r)
}

// commandLine renders a launcher as one shell line: its directory, its
// added environment, its argv.
func commandLine(l launcher) string {
	var b strings.Builder
	if l.Dir != "" {
		b.WriteString("cd " + shellWord(l.Dir) + " && ")
	}
	for _, kv := range l.Env {
		b.WriteString(shellWord(kv) + " ")
	}
	b.WriteString(shellQuote(l.Argv))
	return b.String()
}
