package main

import (
	"fmt"
	"io"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
	"github.com/jail-sandbox/jail/seccomp"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// compiledPolicy is the policy whose first-time compile is timed: the one
// every built-in profile uses.
const compiledPolicy = "default"

// compileRuns is how many times it is compiled.
const compileRuns = 20

// SeccompPart is what compiling a policy costs, paid only on a cache miss
// (a new or edited policy): a run whose program is cached loads it and
// compiles nothing.
type SeccompPart struct {
	Policy       string      `json:"policy"`
	Instructions int         `json:"bpf_instructions"`
	Compile      stats.Stats `json:"compile"`
	SamplesMs    []float64   `json:"samples_ms"`
}

// seccompPart compiles the policy compileRuns times, in this process, as
// jail does on a cache miss.
func seccompPart() (SeccompPart, error) {
	p, err := policyfile.Load(compiledPolicy, policyfile.Options{})
	if err != nil {
		return SeccompPart{}, err
	}
	part := SeccompPart{Policy: compiledPolicy}
	ds := make([]time.Duration, 0, compileRuns)
	for range compileRuns {
		start := time.Now()
		prog, err := seccomp.Compile(p, seccomp.Mode{})
		if err != nil {
			return SeccompPart{}, fmt.Errorf("compile %s: %w", compiledPolicy, err)
		}
		ds = append(ds, time.Since(start))
		part.Instructions = len(prog.BPF) / 8
	}
	part.Compile = stats.Summarize(ds)
	part.SamplesMs = roundAll(stats.Millis(ds), 3)
	return part, nil
}

// printSeccomp prints the compile cost.
func printSeccomp(w io.Writer, p SeccompPart) {
	fmt.Fprintf(w, "  compile %s (%d BPF instructions): median %.2f ms, p95 %.2f ms, min %.2f ms\n",
		p.Policy, p.Instructions, p.Compile.Median, p.Compile.P95, p.Compile.Min)
}
