package cgroup

// A run's limits and the cgroup part of its plan, as the runner reads it
// (cg.c's cg_plan_decode). The flags (CG_*) are cg.h's, read through cgo:
// the runner is their reader.

// #include "cgroup/cg.h"
import "C"

import (
	"math"

	"github.com/jail-sandbox/jail/internal/wire"
)

// Limits are what a run's cgroup holds the jail to; zero is none.
type Limits struct {
	Memory uint64 // bytes, swap none
	Pids   uint64 // processes and threads
	// PidsKill: the run ends when the process limit refuses a fork.
	PidsKill bool
	CPU      float64 // cores
}

// cpuPeriodUs is the CPU quota's period: the kernel's default, short
// enough that a throttled jail stays responsive.
const cpuPeriodUs = 100000

// Need is the controllers a run joins: all of them, whatever it limits,
// so every run has a cgroup in the same hierarchies (the sweep reads one
// of them for all) and is measured the same way.
func (l Limits) Need() Controllers {
	return Memory | Pids | CPU | CPUAcct
}

// Encode writes the cgroup part of a run plan, as cg.c's cg_plan_decode
// reads it. A zero Placement is a run without a cgroup.
func (pl Placement) Encode(w *wire.Writer, l Limits) {
	var flags uint32
	if len(pl.Dirs) > 0 {
		flags |= C.CG_ON
	}
	if pl.Version == V2 {
		flags |= C.CG_V2
	}
	if pl.OwnRelative {
		flags |= C.CG_OWN
	}
	if l.PidsKill {
		flags |= C.CG_PIDS_KILL
	}
	w.U32(flags)
	w.U64(l.Memory)
	w.U32(uint32(min(l.Pids, math.MaxInt32)))
	quota := uint32(0)
	if l.CPU != 0 {
		quota = uint32(math.Ceil(l.CPU * cpuPeriodUs))
	}
	w.U32(quota)
	w.U32(cpuPeriodUs)
	w.U32(uint32(len(pl.Dirs)))
	for _, d := range pl.Dirs {
		w.Str(d.Path)
		w.U32(uint32(d.Controllers))
	}
}
