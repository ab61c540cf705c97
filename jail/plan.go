package jail

// Planning a run: NewPlan resolves a Config against the host into the run
// plan the runner carries out (runplan.h has the layout). The plan's
// magic, version and flags are the C headers' (runplan.h, stage.h,
// seccomp/sc.h), read through cgo: the runner and the init stage are their
// readers.

// #include "jail/runplan.h"
// #include "jail/stage.h"
// #include "seccomp/sc.h"
import "C"

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/jail-sandbox/jail/cgroup"
	"github.com/jail-sandbox/jail/internal/wire"
	"github.com/jail-sandbox/jail/mount"
	"github.com/jail-sandbox/jail/seccomp"
)

// Plan is one run, planned: the run plan the runner (runner.c) carries
// out, and the host paths it was made from, as lstat saw them (nil: absent),
// for the plan cache to tell when it goes stale.
type Plan struct {
	Data []byte
	Deps map[string]fs.FileInfo
	// secrets: the plan's environment holds secrets, so it is never
	// cached (Exec).
	secrets bool
}

// PlanOptions are a run's parts that are not the jail's policy.
type PlanOptions struct {
	// Protected are host paths no writable bind may reach (jail's state).
	Protected []string
	// SeccompCache is where compiled filters are kept ("" for nowhere).
	SeccompCache string
	// Version is jail's, for the audit log.
	Version string
}

// NewPlan resolves cfg against the host (mount sources, who the caller
// is) into a run plan. Everything that can fail before the jail exists
// fails here, with the reason.
func NewPlan(cfg Config, opts PlanOptions) (*Plan, error) {
	ids, err := callerIDs(&cfg)
	if err != nil {
		return nil, err
	}
	if err := checkKeyringBestEffort(cfg); err != nil {
		return nil, err
	}
	var guards []mount.Guard
	for _, p := range opts.Protected {
		guards = append(guards, mount.Guard{Path: p, What: "jail's own state"})
	}
	// No writable bind reaches cgroupfs either: an unprivileged caller's
	// jail owns its own cgroup's limit files.
	guards = append(guards, mount.Guard{Path: cgroup.MountPoint, What: "the cgroup filesystem (the jail's own limits)"})
	if cfg.AuditLog != "" {
		if err := checkAuditLog(cfg.AuditLog); err != nil {
			return nil, err
		}
		// Nor the audit log's directory: the jail could swap the log
		// for a link, or forge its lines. A bind inside that directory
		// cannot write the directory itself.
		guards = append(guards, mount.Guard{Path: filepath.Dir(cfg.AuditLog), What: "the audit log's directory", InsideOK: true},
			mount.Guard{Path: cfg.AuditLog, What: "the audit log"})
	}
	mopts := mount.Options{Root: ids.clone, Protected: guards}
	if ids.root && !ids.clone {
		// Nothing cloned, nothing idmapped: the jail opens its binds
		// as its host ids, and writes a writable one as them.
		mopts.WriteAs = &mount.Owner{UID: ids.uid, GID: ids.gid}
	}
	mounts, err := mount.Prepare(cfg.Mounts, mopts)
	if err != nil {
		return nil, err
	}
	var w wire.Writer
	w.Grow(mounts.Size() + 4096)
	w.U32(C.RUNPLAN_MAGIC)
	w.U32(C.RUNPLAN_VERSION)
	w.U64(uint64(cfg.TimeLimit / time.Nanosecond))
	w.U32(bit(ids.root, C.RUN_ROOT) | bit(ids.root && !ids.clone, C.RUN_NO_ADMIN))
	w.U32(ids.uid)
	w.U32(ids.gid)
	w.U32(cfg.UID)
	w.U32(cfg.GID)
	w.Str(cfg.Profile)
	w.Str(cfg.ProfileHash)
	w.U32(uint32(len(mounts.Trees)))
	for _, t := range mounts.Trees {
		w.Str(t.Path)
		w.U32(bit(t.ReadOnly, C.TREE_RO) | bit(t.IDMap, C.TREE_IDMAP))
		w.U32(t.UID)
		w.U32(t.GID)
	}
	m := w.Begin()
	mounts.Encode(&w)
	w.End(m)

	// The process section's fixed part, as runplan.c's decode_proc reads
	// it; the runner forwards it with a tail of this run's command,
	// environment and umask (forward_encode).
	prefix := w.Begin()
	w.U32(bit(cfg.NewSession, C.PROC_NEW_SESSION) | bit(ids.root, C.PROC_DROP_GROUPS) | bit(cfg.Network.Mode == "host", C.PROC_HOST_NET) |
		bit(cfg.Network.Mode == "allowlist", C.PROC_ALLOWLIST) | bit(cfg.KeyringBestEffort, C.PROC_KEYRING_BEST_EFFORT) |
		bit(cfg.TTY == TTYOn, C.PROC_TTY_ON) | bit(cfg.TTY == TTYAuto, C.PROC_TTY_AUTO) |
		bit(cfg.Network.Mode == "allowlist" && namesAnIP(cfg.Network.Allow), C.PROC_TUN_EAGER))
	w.U32(cfg.UID)
	w.U32(cfg.GID)
	w.Str(cfg.Hostname)
	w.Str(cfg.Dir)
	w.End(prefix)
	w.Strs(cfg.KeepEnv)
	w.Strs(cfg.Env)
	disk, err := planDisk(cfg.Limits, cfg.SessionDir, mounts.Writable)
	if err != nil {
		return nil, err
	}
	place, rlimits, limitsJSON, err := planLimits(cfg, ids, disk)
	if err != nil {
		return nil, err
	}
	rl := w.Begin()
	w.U32(uint32(len(rlimits)))
	for _, r := range rlimits {
		w.U32(uint32(r.Resource))
		w.U64(r.Soft)
		w.U64(r.Hard)
	}
	w.End(rl)
	place.Encode(&w, cgroupLimits(cfg.Limits))
	w.U64(cfg.Limits.MaxOutput)
	disk.encode(&w)
	w.Str(limitsJSON)
	w.Str(networkMode(cfg.Network))
	netConfig, err := proxyConfig(cfg, ids)
	if err != nil {
		return nil, err
	}
	w.Str(netConfig)
	w.Str(cfg.AuditLog)
	w.Str(cfg.Session)
	w.Str(opts.Version)
	w.Str(recordSecrets(cfg))
	if err := encodeSeccomp(&w, cfg, len(disk.binds) > 0, opts.SeccompCache); err != nil {
		return nil, err
	}
	// Bound credentials' real values are in the helper's configuration.
	secret := len(cfg.SecretKeys) > 0 || len(cfg.Network.Credentials) > 0
	return &Plan{Data: w.Data(), Deps: mounts.Deps, secrets: secret}, nil
}

// encodeSeccomp compiles the run's filter (or finds it compiled) and writes
// it with what the runner answers handed calls with. A policy is always
// there: a profile without one gets the default, and only "none", said in
// so many words, means no filter. A jail with a writable bind gets
// fallocate's allocating modes refused on top of the policy (disk.go).
func encodeSeccomp(w *wire.Writer, cfg Config, writable bool, cache string) error {
	p := cfg.Seccomp
	if p == nil {
		return errors.New("no seccomp policy: profiles always give one")
	}
	if writable && !p.None {
		p = withFallocateRefused(p)
	}
	if p.None {
		w.U32(0)
		w.Str("none")
		w.Bytes(nil)
		w.U32(0)
		w.U32(0)
		return nil
	}
	if cfg.SeccompAudit && cfg.SeccompQuiet {
		return errors.New("seccomp: audit reports every refused call; it cannot go with report = false")
	}
	prog, compiled, err := seccomp.Cached(p, seccomp.Mode{Audit: cfg.SeccompAudit, Quiet: cfg.SeccompQuiet}, cache)
	if err != nil {
		return fmt.Errorf("seccomp policy %s: %w", p.Name, err)
	}
	w.U32(C.SC_LOAD | bit(prog.Notify, C.SC_NOTIFY) | bit(prog.Audit, C.SC_AUDIT) | bit(compiled, C.SC_COMPILED) | bit(cfg.SeccompQuiet, C.SC_QUIET))
	w.Str(p.Name)
	w.Bytes(prog.BPF)
	w.U32(uint32(prog.DefaultErrno))
	w.U32(uint32(len(prog.Answers)))
	for _, a := range prog.Answers {
		w.U32(uint32(a.Nr))
		w.U32(uint32(a.Errno))
		w.U32(uint32(len(a.Conds)))
		for _, c := range a.Conds {
			w.U32(uint32(c.Index))
			w.U32(uint32(c.Op))
			w.U64(c.Value)
			w.U64(c.Mask)
		}
	}
	return nil
}

// bit is flag when on is set, else 0.
func bit(on bool, flag uint32) uint32 {
	if on {
		return flag
	}
	return 0
}

// networkMode is the network the record names; a Config that says nothing
// has none.
func networkMode(n Network) string {
	if n.Mode == "" {
		return "none"
	}
	return n.Mode
}

// recordSecrets is the record's fields for the run's secrets, "" for
// none: "secrets", each key with "***", and the credential bindings.
func recordSecrets(cfg Config) string {
	var parts []string
	if len(cfg.SecretKeys) > 0 {
		m := map[string]string{}
		for _, k := range cfg.SecretKeys {
			m[k] = "***"
		}
		b, _ := json.Marshal(m)
		parts = append(parts, `"secrets":`+string(b))
	}
	if c := credentialsJSON(cfg.Network); c != "" {
		parts = append(parts, c)
	}
	return strings.Join(parts, ",")
}

// checkAuditLog refuses, before anything runs, an audit log the runner
// could not append to: a directory, a link, a FIFO, a device, or one whose
// directory is missing.
func checkAuditLog(path string) error {
	fi, err := os.Lstat(path)
	switch {
	case err == nil && fi.IsDir():
		return fmt.Errorf("audit log %s: a directory; give the path of the log file in it", path)
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("audit log %s: not a regular file", path)
	case errors.Is(err, fs.ErrNotExist):
		if dfi, derr := os.Stat(filepath.Dir(path)); derr != nil || !dfi.IsDir() {
			return fmt.Errorf("audit log %s: its directory %s does not exist", path, filepath.Dir(path))
		}
	case err != nil:
		return fmt.Errorf("audit log: %w", err)
	}
	return nil
}
