package profiles

// Decoding: one profile file from TOML to a layer, strictly, every problem
// reported at once (the machinery is tomlstrict's; the schema is here).

import (
	"errors"
	"slices"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp/policyfile"
)

// Problem is one thing wrong with a profile, located in its file.
type Problem = tomlstrict.Problem

// Errors is every problem found in a profile and the profiles it extends.
type Errors = tomlstrict.Errors

// layer is one profile file, decoded but not merged: the values it sets and
// which keys it set, so that a child overrides only what it says.
type layer struct {
	*tomlstrict.Doc                 // the file, for problems
	dir             string          // the directory relative paths start from; "" for built-ins
	extends         string          // the parent, as written
	set             map[string]bool // key paths this file defines: "hostname", "user.uid", "limits.core", ...
	p               Profile         // the values: scalars where set says so, env and mounts as written
	// policy is the policy the profile's [seccomp] table writes inline (nil
	// when it names or imports one instead).
	policy *policyfile.Def
}

// Extends is the profile the file extends.
func (l *layer) Extends() string { return l.extends }

// decodeLayer parses and validates one profile file. It returns a nil layer
// only when the file is not TOML at all; otherwise the layer and every
// problem in it.
func decodeLayer(doc *tomlstrict.Doc) (*layer, Errors) {
	l := &layer{Doc: doc, set: map[string]bool{}}
	probs, ok := tomlstrict.Decode(doc, func(d *tomlstrict.Decoder, top map[string]any) {
		(&decoder{d, l}).top(top)
	})
	if !ok {
		return nil, probs
	}
	return l, probs
}

// decoder walks one file's values into its layer.
type decoder struct {
	*tomlstrict.Decoder
	l *layer
}

func (d *decoder) top(m map[string]any) {
	p, set := &d.l.p, d.l.set
	p.Env.Set = map[string]string{}
	d.Each("", m, topKeys, func(k, key string, v any) bool {
		switch k {
		case "description":
			p.Description, set[k] = d.Str(key, v)
		case "extends":
			if s, ok := d.CheckedStr(key, v, checkTarget); ok {
				d.l.extends = s
			}
		case "hostname":
			p.Hostname, set[k] = d.CheckedStr(key, v, checkHostname)
		case "secrets":
			d.Sub(key, v, func(t map[string]any) {
				d.Each("secrets", t, []string{"file"}, func(k, key string, v any) bool {
					if k != "file" {
						return false
					}
					p.Secrets.File, set[key] = d.CheckedStr(key, v, checkHostFile)
					return true
				})
			})
		case "audit_log":
			p.AuditLog, set[k] = d.CheckedStr(key, v, checkHostFile)
		case "cwd":
			p.Cwd, set[k] = d.CheckedStr(key, v, func(s string) error { return checkJailPath(s, true) })
		case "new_session":
			p.NewSession, set[k] = d.Bool(key, v)
		case "session_keyring":
			p.SessionKeyring, set[k] = d.CheckedStr(key, v, checkSessionKeyring)
		case "user":
			d.Sub(key, v, d.user)
		case "env":
			d.Sub(key, v, d.env)
		case "limits":
			d.Sub(key, v, d.limits)
		case "network":
			d.Sub(key, v, d.network)
		case "seccomp":
			d.Sub(key, v, d.seccomp)
		case "mount":
			d.mounts(key, v)
		case "credential":
			d.credentials(key, v)
		default:
			return false
		}
		return true
	})
}

func (d *decoder) user(t map[string]any) {
	u, set := &d.l.p.User, d.l.set
	d.Each("user", t, userKeys, func(k, key string, v any) bool {
		switch k {
		case "uid":
			u.UID, set[key] = d.id(key, v, checkID)
		case "gid":
			u.GID, set[key] = d.id(key, v, checkID)
		case "host_uid":
			u.HostUID, set[key] = d.id(key, v, checkHostID)
		case "host_gid":
			u.HostGID, set[key] = d.id(key, v, checkHostID)
		case "name":
			u.Name, set[key] = d.CheckedStr(key, v, checkUserName)
		default:
			return false
		}
		return true
	})
}

// id decodes a uid or gid.
func (d *decoder) id(key string, v any, check func(int64) error) (uint32, bool) {
	n, ok := d.Int(key, v)
	if !ok || !d.CheckValue(key, n, check(n)) {
		return 0, false
	}
	return uint32(n), true
}

func (d *decoder) env(t map[string]any) {
	e := &d.l.p.Env
	d.Each("env", t, envKeys, func(k, key string, v any) bool {
		switch k {
		case "keep":
			e.Keep = append(e.Keep, d.Strings(key, v, "variable names", checkEnvName)...)
		case "set":
			vars, _ := d.Table(key, v)
			for _, name := range tomlstrict.SortedKeys(vars) {
				vkey := tomlstrict.JoinKey(key, name)
				if s, ok := d.Str(vkey, vars[name]); ok && d.Check(vkey, errors.Join(checkEnvName(name), checkEnvValue(s))) {
					e.Set[name] = s
				}
			}
		default:
			return false
		}
		return true
	})
}

func (d *decoder) limits(t map[string]any) {
	lim, set := &d.l.p.Limits, d.l.set
	d.Each("limits", t, limitKeys, func(k, key string, v any) bool {
		if k == "time" {
			dur, err := parseTime(v)
			if d.CheckValue(key, v, err) {
				lim.Time, set[key] = dur, true
			}
			return true
		}
		if d.cgroupLimit(lim, k, key, v) {
			return true
		}
		i := slices.IndexFunc(rlimits, func(r rlimitKey) bool { return r.key == k })
		if i < 0 {
			return false
		}
		var n uint64
		var err error
		switch rlimits[i].kind {
		case sizeLimit:
			n, err = parseSize(v)
		case countLimit:
			n, err = parseCount(v)
		case cpuLimit:
			n, err = parseCPU(v)
		}
		if err == nil && k == "nofile" {
			err = checkNofile(n)
		}
		if d.CheckValue(key, v, err) {
			*lim.rlimit(k), set[key] = &n, true
		}
		return true
	})
}

// cgroupLimit decodes the limits that are not rlimits; false: k is not one.
func (d *decoder) cgroupLimit(lim *Limits, k, key string, v any) bool {
	var err error
	switch k {
	case "memory":
		var n uint64
		if n, err = parseSize(v); err == nil {
			err = checkMemory(n)
			lim.Memory = &n
		}
	case "pids":
		var n uint64
		if n, err = parseCount(v); err == nil {
			err = checkPids(n)
			lim.Pids = &n
		}
	case "cpu":
		var n float64
		n, err = parseCores(v)
		lim.CPU = &n
	case "max_output":
		var n uint64
		n, err = parseSize(v)
		lim.MaxOutput = &n
	case "disk", "session_disk":
		var n uint64
		if n, err = parseSize(v); err == nil {
			err = checkDisk(n)
			if k == "disk" {
				lim.Disk = &n
			} else {
				lim.SessionDisk = &n
			}
		}
	case "disk_reserve":
		var r Reserve
		r, err = parseReserve(v)
		lim.DiskReserve = &r
	case "mode", "on_pids_limit", "cgroup_parent":
		s, ok := d.Str(key, v)
		if !ok {
			return true
		}
		switch k {
		case "mode":
			lim.Mode, err = s, checkLimitsMode(s)
		case "on_pids_limit":
			lim.OnPidsLimit, err = s, checkOnPidsLimit(s)
		default:
			lim.CgroupParent, err = s, checkCgroupParent(s)
		}
	default:
		return false
	}
	if d.CheckValue(key, v, err) {
		d.l.set[key] = true
	}
	return true
}
