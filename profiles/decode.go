package profiles

// Decoding: one profile file from TOML to a layer, strictly. The file is
// parsed into generic values and walked by hand rather than decoded into a
// struct, because the struct decoder stops at the first type error and every
// problem must be reported at once.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// layer is one profile file, decoded but not merged: the values it sets and
// which keys it set, so that a child overrides only what it says.
type layer struct {
	file    string          // as problems name it
	id      string          // identity for cycle detection: absolute path, or "built-in:NAME"
	dir     string          // the directory relative extends paths start from; "" for built-ins
	extends string          // the parent, as written
	set     map[string]bool // key paths this file defines: "hostname", "user.uid", "limits.core", ...
	p       Profile         // the values: scalars where set says so, env and mounts as written
	// policy is a policy file's policy, or the inline one a profile's
	// [seccomp] table writes (nil when it names or imports one instead).
	policy *policyDef
	src    string   // the file's text, for the locator
	loc    *locator // built on first use: a file without problems never needs it
}

// locator returns the layer's locator, scanning the source the first time.
func (l *layer) locator() *locator {
	if l.loc == nil {
		l.loc = locate(l.src)
	}
	return l.loc
}

// problem locates one problem about key in this layer's file.
func (l *layer) problem(key, msg string) Problem {
	line, col := l.locator().find(key)
	return Problem{File: l.file, Line: line, Col: col, Key: key, Msg: msg}
}

// decodeLayer parses and validates one profile file. It returns a nil layer
// only when the file is not TOML at all; otherwise the layer and every
// problem in it.
func decodeLayer(file string, src []byte) (*layer, Errors) {
	return decodeWith(file, src, (*decoder).top)
}

// decodeWith parses one file and walks its top-level table with walk.
func decodeWith(file string, src []byte, walk func(*decoder, map[string]any)) (*layer, Errors) {
	var m map[string]any
	if _, err := toml.Decode(string(src), &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, col := syntaxPos(string(src), pe)
			return nil, Errors{{File: file, Line: line, Col: col, Msg: pe.Message}}
		}
		return nil, Errors{{File: file, Msg: err.Error()}}
	}
	l := &layer{file: file, set: map[string]bool{}, src: string(src)}
	d := &decoder{l: l}
	walk(d, m)
	d.probs.sortByPosition()
	return l, d.probs
}

// syntaxPos returns the line and byte column of a parse error, computed
// from its offset (the parser's own column is off by one line's length when
// the offending byte ends a line).
func syntaxPos(src string, pe toml.ParseError) (line, col int) {
	starts := lineStarts(strings.TrimPrefix(src, "\ufeff")) // the parser drops the BOM too
	line, col = pe.Position.Line, pe.Position.Col
	if line >= 1 && line <= len(starts) {
		if c := pe.Position.Start - starts[line-1] + 1; c >= 1 {
			col = c
		}
	}
	return line, col
}

// decoder walks one file's generic values into its layer, collecting
// problems rather than stopping at the first.
type decoder struct {
	l     *layer
	probs Errors
}

func (d *decoder) fail(key, format string, args ...any) {
	d.probs = append(d.probs, d.l.problem(key, fmt.Sprintf(format, args...)))
}

// failValue reports a value that has the right type but a bad value, quoting
// the value as the file wrote it.
func (d *decoder) failValue(key string, v any, err error) {
	switch v := v.(type) {
	case string:
		d.fail(key, "%q: %v", v, err)
	case int64:
		d.fail(key, "%d: %v", v, err)
	default:
		d.fail(key, "got %s: %v", typeName(v), err)
	}
}

func (d *decoder) unknown(key, name string, known []string) {
	if s := suggest(name, known); s != "" {
		d.fail(key, "unknown key, did you mean %q?", s)
		return
	}
	d.fail(key, "unknown key")
}

func (d *decoder) str(key string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.fail(key, "want a string, got %s", typeName(v))
	}
	return s, ok
}

func (d *decoder) table(key string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		d.fail(key, "want a table, got %s", typeName(v))
	}
	return t, ok
}

// tables returns an array of tables, written as [[key]] or inline, with
// its elements still to be checked for being tables.
func (d *decoder) tables(key string, v any) ([]any, bool) {
	switch v := v.(type) {
	case []map[string]any:
		tables := make([]any, len(v))
		for i, t := range v {
			tables[i] = t
		}
		return tables, true
	case []any:
		return v, true
	}
	d.fail(key, "want an array of tables ([[%s]]), got %s", headerName(key), typeName(v))
	return nil, false
}

// headerName is how a TOML header names the table at key: "rule[2].arg" is
// written [[rule.arg]].
func headerName(key string) string {
	var b strings.Builder
	depth := 0
	for i := 0; i < len(key); i++ {
		switch c := key[i]; {
		case c == '[':
			depth++
		case c == ']':
			depth--
		case depth == 0:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// check reports err, if any, against key and says whether the value is good.
func (d *decoder) check(key string, err error) bool {
	if err != nil {
		d.fail(key, "%v", err)
	}
	return err == nil
}

// checkValue is check for a problem with the value v itself, which it quotes.
func (d *decoder) checkValue(key string, v any, err error) bool {
	if err != nil {
		d.failValue(key, v, err)
	}
	return err == nil
}

// id decodes a uid or gid.
func (d *decoder) id(key string, v any, checkFn func(int64) error) (uint32, bool) {
	n, ok := v.(int64)
	if !ok {
		d.fail(key, "want an integer, got %s", typeName(v))
		return 0, false
	}
	if err := checkFn(n); err != nil {
		d.failValue(key, n, err)
		return 0, false
	}
	return uint32(n), true
}

func sortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

func (d *decoder) top(m map[string]any) {
	p, set := &d.l.p, d.l.set
	p.Env.Set = map[string]string{}
	for _, k := range sortedKeys(m) {
		v, key := m[k], joinKey("", k)
		switch k {
		case "description":
			if s, ok := d.str(key, v); ok {
				p.Description, set[k] = s, true
			}
		case "extends":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkTarget(s)) {
				d.l.extends = s
			}
		case "hostname":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkHostname(s)) {
				p.Hostname, set[k] = s, true
			}
		case "secrets":
			if t, ok := d.table(key, v); ok {
				for _, sk := range sortedKeys(t) {
					skey := joinKey("secrets", sk)
					if sk != "file" {
						d.unknown(skey, sk, []string{"file"})
						continue
					}
					if s, ok := d.str(skey, t[sk]); ok && d.checkValue(skey, s, checkHostFile(s)) {
						p.Secrets.File, set[skey] = s, true
					}
				}
			}
		case "audit_log":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkHostFile(s)) {
				p.AuditLog, set[k] = s, true
			}
		case "cwd":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkJailPath(s, true)) {
				p.Cwd, set[k] = s, true
			}
		case "new_session":
			if b, ok := v.(bool); ok {
				p.NewSession, set[k] = b, true
			} else {
				d.fail(key, "want a boolean, got %s", typeName(v))
			}
		case "user":
			if t, ok := d.table(key, v); ok {
				d.user(t)
			}
		case "env":
			if t, ok := d.table(key, v); ok {
				d.env(t)
			}
		case "limits":
			if t, ok := d.table(key, v); ok {
				d.limits(t)
			}
		case "network":
			if t, ok := d.table(key, v); ok {
				d.network(t)
			}
		case "seccomp":
			if t, ok := d.table(key, v); ok {
				d.seccomp(t)
			}
		case "mount":
			d.mounts(key, v)
		default:
			d.unknown(key, k, topKeys)
		}
	}
}

func (d *decoder) user(t map[string]any) {
	u, set := &d.l.p.User, d.l.set
	for _, k := range sortedKeys(t) {
		v, key := t[k], joinKey("user", k)
		var ok bool
		switch k {
		case "uid":
			u.UID, ok = d.id(key, v, checkID)
		case "gid":
			u.GID, ok = d.id(key, v, checkID)
		case "host_uid":
			u.HostUID, ok = d.id(key, v, checkHostID)
		case "host_gid":
			u.HostGID, ok = d.id(key, v, checkHostID)
		case "name":
			u.Name, ok = d.str(key, v)
			ok = ok && d.checkValue(key, u.Name, checkUserName(u.Name))
		default:
			d.unknown(key, k, userKeys)
		}
		set[key] = ok
	}
}

func (d *decoder) env(t map[string]any) {
	e := &d.l.p.Env
	for _, k := range sortedKeys(t) {
		v, key := t[k], joinKey("env", k)
		switch k {
		case "keep":
			arr, ok := v.([]any)
			if !ok {
				d.fail(key, "want an array of variable names, got %s", typeName(v))
				continue
			}
			for i, x := range arr {
				ekey := indexKey(key, i+1)
				if s, ok := d.str(ekey, x); ok && d.checkValue(ekey, s, checkEnvName(s)) {
					e.Keep = append(e.Keep, s)
				}
			}
		case "set":
			vars, ok := d.table(key, v)
			if !ok {
				continue
			}
			for _, name := range sortedKeys(vars) {
				vkey := joinKey(key, name)
				s, ok := d.str(vkey, vars[name])
				if ok && d.check(vkey, errors.Join(checkEnvName(name), checkEnvValue(s))) {
					e.Set[name] = s
				}
			}
		default:
			d.unknown(key, k, envKeys)
		}
	}
}

func (d *decoder) limits(t map[string]any) {
	lim, set := &d.l.p.Limits, d.l.set
	for _, k := range sortedKeys(t) {
		v, key := t[k], joinKey("limits", k)
		if k == "time" {
			dur, err := parseTime(v)
			if err != nil {
				d.failValue(key, v, err)
				continue
			}
			lim.Time, set[key] = dur, true
			continue
		}
		if d.cgroupLimit(lim, k, key, v) {
			continue
		}
		i := slices.IndexFunc(rlimits, func(r rlimitKey) bool { return r.key == k })
		if i < 0 {
			d.unknown(key, k, limitKeys)
			continue
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
		if err != nil {
			d.failValue(key, v, err)
			continue
		}
		*lim.rlimit(k), set[key] = &n, true
	}
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
	case "mode":
		s, ok := d.str(key, v)
		if !ok {
			return true
		}
		err = checkLimitsMode(s)
		lim.Mode = s
	case "on_pids_limit":
		s, ok := d.str(key, v)
		if !ok {
			return true
		}
		err = checkOnPidsLimit(s)
		lim.OnPidsLimit = s
	case "cgroup_parent":
		s, ok := d.str(key, v)
		if !ok {
			return true
		}
		err = checkCgroupParent(s)
		lim.CgroupParent = s
	default:
		return false
	}
	if err != nil {
		d.failValue(key, v, err)
		return true
	}
	d.l.set[key] = true
	return true
}
