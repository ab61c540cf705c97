package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
)

// latencyPart measures the launchers one call at a time, alternating, and
// summarises the samples; ls must be true, jail, bwrap, jail-nofilter,
// jail-nocgroup, jail-allowlist in that order.
func latencyPart(c *caller, ls []launcher, cfg config) (LatencyPart, error) {
	samples, err := measureLatency(c, ls, cfg.warmup, cfg.runs)
	if err != nil {
		return LatencyPart{}, err
	}
	p := LatencyPart{
		Warmup:    cfg.warmup,
		Stats:     map[string]stats.Stats{},
		SamplesMs: map[string][]float64{},
	}
	for i, l := range ls {
		p.Stats[l.Name] = stats.Summarize(samples[i])
		p.SamplesMs[l.Name] = roundAll(stats.Millis(samples[i]), 3)
	}
	j, b := p.Stats["jail"], p.Stats["bwrap"]
	p.JailBwrapMedian = stats.Ratio(j.Median, b.Median)
	p.JailBwrapP95 = stats.Ratio(j.P95, b.P95)
	p.FilterMedian = stats.Ratio(j.Median, p.Stats["jail-nofilter"].Median)
	nc := p.Stats["jail-nocgroup"]
	p.CgroupMedianMs = j.Median - nc.Median
	p.CgroupP95Ms = j.P95 - nc.P95
	p.CgroupMedian = stats.Ratio(j.Median, nc.Median)
	p.AllowlistMedian = stats.Ratio(p.Stats["jail-allowlist"].Median, j.Median)
	return p, nil
}

// throughputPart measures jail's and bwrap's calls per second with every
// caller busy; sandboxes must be jail, bwrap (and jail-allowlist) in that
// order.
func throughputPart(cs []*caller, sandboxes []launcher, cfg config) (ThroughPart, error) {
	res, err := measureThroughput(cs, sandboxes, throughputRounds, cfg.duration)
	if err != nil {
		return ThroughPart{}, err
	}
	p := ThroughPart{
		Workers:        len(cs),
		BurstSeconds:   cfg.duration.Seconds(),
		Results:        res,
		JailBwrapRatio: stats.Ratio(res[0].PerSecond, res[1].PerSecond),
	}
	if len(res) > 2 {
		p.AllowlistRatio = stats.Ratio(res[2].PerSecond, res[0].PerSecond)
	}
	return p, nil
}

// newCallers returns n callers, one per throughput worker.
func newCallers(n int, timeout time.Duration) ([]*caller, error) {
	cs := make([]*caller, 0, n)
	for range n {
		c, err := newCaller(timeout)
		if err != nil {
			closeCallers(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// closeCallers closes every caller in cs.
func closeCallers(cs []*caller) {
	for _, c := range cs {
		c.Close()
	}
}

// names joins the launchers' names with commas.
func names(ls []launcher) string {
	ns := make([]string, len(ls))
	for i, l := range ls {
		ns[i] = l.Name
	}
	return strings.Join(ns, ", ")
}

// printHeader prints the host context and the exact command lines.
func printHeader(w io.Writer, r Report) {
	fmt.Fprintf(w, "jail bench: wall time per call of %s, launched %d ways\n", r.Target, len(r.Launchers))
	printHost(w, r.Host)
	fmt.Fprintln(w, "command lines:")
	for _, l := range r.Launchers {
		fmt.Fprintf(w, "  %-14s %s\n", l.Name, l.Command)
	}
}

// printHost prints the machine and the two sandboxes' paths and versions.
func printHost(w io.Writer, h Host) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  kernel\t%s\n", h.Kernel)
	fmt.Fprintf(tw, "  cpus\t%d\n", h.CPUs)
	fmt.Fprintf(tw, "  jail\t%s  [%s]\n", h.Jail, h.JailVersion)
	fmt.Fprintf(tw, "  bwrap\t%s  [%s]\n", h.Bwrap, h.BwrapVersion)
	tw.Flush()
}

// printLatency prints the per-launcher statistics and the ratios.
func printLatency(w io.Writer, ls []launcher, p LatencyPart, t TargetValues) {
	fmt.Fprintf(w, "  %-14s %8s %8s %8s %8s   (ms per call)\n", "launcher", "median", "p95", "mean", "min")
	for _, l := range ls {
		s := p.Stats[l.Name]
		fmt.Fprintf(w, "  %-14s %8.2f %8.2f %8.2f %8.2f\n", l.Name, s.Median, s.P95, s.Mean, s.Min)
	}
	fmt.Fprintf(w, "  ratio jail/bwrap of the medians:  %5.2f   %s\n", p.JailBwrapMedian, verdict(p.JailBwrapMedian <= t.MedianRatioMax, "≤", t.MedianRatioMax))
	fmt.Fprintf(w, "  ratio jail/bwrap of the p95s:     %5.2f   %s\n", p.JailBwrapP95, verdict(p.JailBwrapP95 <= t.P95RatioMax, "≤", t.P95RatioMax))
	fmt.Fprintf(w, "  ratio jail/jail-nofilter of the medians (the seccomp filter, cached): %5.2f\n", p.FilterMedian)
	fmt.Fprintf(w, "  the run's cgroup (jail - jail-nocgroup): median %+.2f ms, p95 %+.2f ms, ratio of the medians %5.2f\n",
		p.CgroupMedianMs, p.CgroupP95Ms, p.CgroupMedian)
	if _, ok := p.Stats["jail-allowlist"]; ok {
		fmt.Fprintf(w, "  ratio jail-allowlist/jail of the medians (no connection made): %5.2f   %s\n",
			p.AllowlistMedian, verdict(p.AllowlistMedian <= t.AllowlistRatioMax, "≤", t.AllowlistRatioMax))
	}
}

// printThroughput prints calls per second for jail and bwrap (and
// jail-allowlist) and the ratios.
func printThroughput(w io.Writer, p ThroughPart, t TargetValues) {
	fmt.Fprintf(w, "  %-14s %8s %8s %8s\n", "launcher", "calls", "seconds", "calls/s")
	for _, r := range p.Results {
		fmt.Fprintf(w, "  %-14s %8d %8.2f %8.1f\n", r.Launcher, r.Calls, r.Seconds, r.PerSecond)
	}
	fmt.Fprintf(w, "  ratio jail/bwrap of calls/s:      %5.2f   %s\n", p.JailBwrapRatio,
		verdict(p.JailBwrapRatio >= t.ThroughputRatioMin, "≥", t.ThroughputRatioMin))
	if len(p.Results) > 2 {
		floor := 1 / t.AllowlistRatioMax
		fmt.Fprintf(w, "  ratio jail-allowlist/jail of calls/s: %5.2f   %s\n", p.AllowlistRatio,
			verdict(p.AllowlistRatio >= floor, "≥", floor))
	}
}

// verdict labels a ratio against its target.
func verdict(met bool, op string, target float64) string {
	word := "MISSED"
	if met {
		word = "met"
	}
	return fmt.Sprintf("(target %s %.2f: %s)", op, target, word)
}

// roundAll rounds every x to the given number of decimals, in place.
func roundAll(xs []float64, decimals int) []float64 {
	scale := math.Pow(10, float64(decimals))
	for i, x := range xs {
		xs[i] = math.Round(x*scale) / scale
	}
	return xs
}

// writeJSON writes r as indented JSON to path; an empty path writes nothing.
func writeJSON(path string, r Report) error {
	if path == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("-json: %w", err)
	}
	return nil
}
