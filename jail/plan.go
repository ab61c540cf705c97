package jail

import (
	"jail/internal/wire"
	"jail/mount"
)

// The plan's framing; stage.h has the same values.
const (
	planMagic   = 0x4c49414a // "JAIL"
	planVersion = 1

	sectionMounts  = 1
	sectionProcess = 2

	procNewSession = 1
	procDropGroups = 2
)

// encodePlan writes everything the init stage needs, in the order init.c
// reads it, framed for the plan pipe: its length, header, mount section,
// process section. It is written in place, in one buffer: a plan can carry
// file contents, and every copy of it costs page faults.
func encodePlan(cfg *Config, ids hostIDs, mounts *mount.Prepared, umask uint32) []byte {
	var w wire.Writer
	w.Grow(mounts.Size() + 4096 + argsSize(cfg))
	frame := w.Begin()
	w.U32(planMagic)
	w.U32(planVersion)
	w.U32(uint32(len(mounts.Trees)))

	w.U32(sectionMounts)
	m := w.Begin()
	mounts.Encode(&w)
	w.End(m)

	w.U32(sectionProcess)
	p := &w
	proc := w.Begin()
	var flags uint32
	if cfg.NewSession {
		flags |= procNewSession
	}
	if ids.root {
		flags |= procDropGroups
	}
	p.U32(flags)
	p.U32(cfg.UID)
	p.U32(cfg.GID)
	p.Str(cfg.Hostname)
	p.Str(cfg.Dir)
	p.Strs(cfg.Argv)
	p.Strs(cfg.Env)
	p.U32(uint32(len(cfg.Rlimits)))
	for _, r := range cfg.Rlimits {
		p.U32(uint32(r.Resource))
		p.U64(r.Soft)
		p.U64(r.Hard)
	}
	p.U32(umask)
	w.End(proc)
	w.End(frame)

	data := w.Data()
	// The frame is the bare length: the init stage reads exactly it.
	return data[:len(data)-1]
}

func argsSize(cfg *Config) int {
	n := 0
	for _, s := range cfg.Argv {
		n += len(s) + 5
	}
	for _, s := range cfg.Env {
		n += len(s) + 5
	}
	return n
}
