package profiles

// Decoding the seccomp policy language, in its two places: a policy file
// (seccomp/NAME.toml) and a profile's [seccomp] table, which names a policy,
// imports an OCI file, or writes a policy inline in the same language.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"jail/seccomp"
)

// The policies every jail knows by name.
const (
	policyDefault = "default" // what a profile that names none gets
	policyNone    = "none"    // no filter at all: only when a profile says so
	inlineName    = "inline"  // the Name of a policy written in a profile
	ociPrefix     = "oci:"    // the Name of an imported one: "oci:" and its path
)

// policyDef is one policy as a file, or a profile's [seccomp] table, writes
// it: before its extends is followed.
type policyDef struct {
	description string
	extends     string
	dflt        *seccomp.Action // nil: not set here
	rules       []seccomp.Rule
}

// decodePolicy parses and validates one policy file, as decodeLayer does a
// profile; the layer's policy holds what it says.
func decodePolicy(file string, src []byte) (*layer, Errors) {
	return decodeWith(file, src, (*decoder).policyFile)
}

// policyFile decodes a policy file's top-level table.
func (d *decoder) policyFile(m map[string]any) {
	def := &policyDef{}
	d.l.policy = def
	for _, k := range sortedKeys(m) {
		v, key := m[k], joinKey("", k)
		if k == "description" {
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkEnvValue(s)) {
				def.description = s
			}
			continue
		}
		if !d.policyKey(def, "", k, v) {
			d.unknown(key, k, policyKeys)
		}
	}
}

// seccomp decodes a profile's [seccomp] table. It names its policy one way
// only: policy, oci, or the inline keys; a table with none of them (only
// audit) keeps the parent's.
func (d *decoder) seccomp(t map[string]any) {
	sc, set := &d.l.p.Seccomp, d.l.set
	def := &policyDef{}
	var sources []string // the keys that say which policy
	inline := false
	for _, k := range sortedKeys(t) {
		v, key := t[k], joinKey("seccomp", k)
		switch k {
		case "policy":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkPolicyRef(s)) {
				sc.Policy = s
			}
		case "oci":
			if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkOCIPath(s)) {
				sc.OCI = s
			}
		case "audit":
			if b, ok := v.(bool); ok {
				sc.Audit, set[key] = b, true
			} else {
				d.fail(key, "want a boolean, got %s", typeName(v))
			}
			continue
		case "report":
			if b, ok := v.(bool); ok {
				sc.Quiet, set[key] = !b, true
			} else {
				d.fail(key, "want a boolean, got %s", typeName(v))
			}
			continue
		case "description":
			d.fail(key, "only in a policy file: a profile describes itself at the top")
			continue
		default:
			if !d.policyKey(def, "seccomp", k, v) {
				d.unknown(key, k, seccompKeys)
				continue
			}
			d.l.policy, inline = def, true
		}
		sources = append(sources, k)
	}
	if len(sources) == 0 {
		return // audit alone: the policy is the parent's
	}
	ways := 0
	for _, named := range []bool{slices.Contains(sources, "policy"), slices.Contains(sources, "oci"), inline} {
		if named {
			ways++
		}
	}
	if ways > 1 {
		slices.SortFunc(sources, func(a, b string) int {
			return slices.Index(seccompKeys, a) - slices.Index(seccompKeys, b)
		})
		d.fail("seccomp", "give one of policy, oci or a policy inline (extends, default, rule), not %s", andList(sources))
	}
	set["seccomp"] = true
}

// policyKey decodes one key the policy language shares between a policy
// file and a profile's [seccomp] table (at base); false when k is not one.
func (d *decoder) policyKey(def *policyDef, base, k string, v any) bool {
	key := joinKey(base, k)
	switch k {
	case "extends":
		if s, ok := d.str(key, v); ok && d.checkValue(key, s, checkPolicyParent(s)) {
			def.extends = s
		}
	case "default":
		if a, ok := d.action(key, v); ok {
			def.dflt = &a
		}
	case "rule":
		tables, ok := d.tables(key, v)
		if !ok {
			break
		}
		for i, x := range tables {
			rkey := indexKey(key, i+1)
			if t, ok := d.table(rkey, x); ok {
				if r, ok := d.rule(rkey, t); ok {
					def.rules = append(def.rules, r)
				}
			}
		}
	default:
		return false
	}
	return true
}

// actionChoices is how a message lists the actions.
const actionChoices = `"allow", "kill_process", "kill_thread", "trap", "log", "notify" or { errno = N }`

// actionNames are the actions written as a plain name, for suggestions.
var actionNames = []string{"allow", "kill_process", "kill_thread", "trap", "log", "notify"}

// action decodes an action: its name, or { errno = N }.
func (d *decoder) action(key string, v any) (seccomp.Action, bool) {
	switch v := v.(type) {
	case string:
		k, ok := seccomp.ParseActionKind(v)
		switch {
		case ok && k == seccomp.Errno:
			d.fail(key, `"errno" needs the error: write { errno = "EPERM" } or { errno = 1 }`)
		case ok:
			return seccomp.Action{Kind: k}, true
		default:
			msg := fmt.Sprintf("%q: unknown action: want %s", v, actionChoices)
			if s := suggest(v, actionNames); s != "" {
				msg += fmt.Sprintf("; did you mean %q?", s)
			}
			d.fail(key, "%s", msg)
		}
	case map[string]any:
		ok := true
		for _, k := range sortedKeys(v) {
			if k != "errno" {
				d.unknown(joinKey(key, k), k, []string{"errno"})
				ok = false
			}
		}
		e, has := v["errno"]
		if !has {
			d.fail(key, `want { errno = N }: N from 1 to 4095, or a name such as "EPERM"`)
			return seccomp.Action{}, false
		}
		n, eok := d.errno(joinKey(key, "errno"), e)
		return seccomp.Action{Kind: seccomp.Errno, Errno: n}, ok && eok
	default:
		d.fail(key, "want %s, got %s", actionChoices, typeName(v))
	}
	return seccomp.Action{}, false
}

// errno decodes the error an errno action returns: a number or a name.
func (d *decoder) errno(key string, v any) (int, bool) {
	switch v := v.(type) {
	case int64:
		if v < 1 || v > maxErrno {
			d.failValue(key, v, fmt.Errorf("want 1 to %d, or a name such as \"EPERM\"", maxErrno))
			return 0, false
		}
		return int(v), true
	case string:
		if n, ok := errnoValue(v); ok {
			return n, true
		}
		d.failValue(key, v, errors.New(`unknown error name: want one such as "EPERM", "ENOSYS" or "EACCES"`))
		return 0, false
	}
	d.fail(key, `want a number or a name such as "EPERM", got %s`, typeName(v))
	return 0, false
}

// rule decodes one [[rule]] table; ok is false when it has any problem.
func (d *decoder) rule(key string, t map[string]any) (r seccomp.Rule, ok bool) {
	before := len(d.probs)
	for _, k := range sortedKeys(t) {
		v, kkey := t[k], joinKey(key, k)
		switch k {
		case "syscalls":
			r.Names = d.syscalls(kkey, v)
		case "action":
			r.Action, _ = d.action(kkey, v)
		case "comment":
			if s, ok := d.str(kkey, v); ok && d.checkValue(kkey, s, checkEnvValue(s)) {
				r.Comment = s
			}
		case "arg":
			tables, ok := d.tables(kkey, v)
			if !ok {
				continue
			}
			compared := map[uint]string{} // argument index -> the condition's key
			for i, x := range tables {
				ckey := indexKey(kkey, i+1)
				if ct, ok := d.table(ckey, x); ok {
					if c, ok := d.cond(ckey, ct); ok {
						if other, dup := compared[c.Index]; dup {
							d.fail(ckey+".index", "argument %d is already compared by %s: a filter compares each argument once per rule; write a rule for each condition", c.Index, other)
							continue
						}
						compared[c.Index] = ckey
						r.Conds = append(r.Conds, c)
					}
				}
			}
		default:
			d.unknown(kkey, k, ruleKeys)
		}
	}
	if _, has := t["syscalls"]; !has {
		d.fail(key+".syscalls", "required: the syscalls and @groups the rule is for")
	}
	if _, has := t["action"]; !has {
		d.fail(key+".action", `required: what the filter does to them, such as { errno = "EPERM" }`)
	}
	return r, len(d.probs) == before
}

// syscalls decodes a rule's syscall and group names, each one checked.
func (d *decoder) syscalls(key string, v any) []string {
	arr, ok := v.([]any)
	if !ok {
		d.fail(key, "want an array of syscall names and @groups, got %s", typeName(v))
		return nil
	}
	if len(arr) == 0 {
		d.fail(key, "empty: name at least one syscall or @group")
	}
	var names []string
	for i, x := range arr {
		ekey := indexKey(key, i+1)
		s, ok := d.str(ekey, x)
		if !ok {
			continue
		}
		if err := seccomp.CheckName(s); err != nil {
			msg := err.Error()
			if strings.HasPrefix(s, "@") {
				if g := suggest(s, slices.Sorted(maps.Keys(seccomp.Groups))); g != "" {
					msg += fmt.Sprintf("; did you mean %q?", g)
				}
			}
			d.fail(ekey, "%s", msg)
			continue
		}
		names = append(names, s)
	}
	return names
}

// opChoices is how a message lists the comparisons.
const opChoices = "eq, ne, lt, le, gt, ge or masked_eq"

// opNames are the comparisons, for suggestions.
var opNames = []string{"eq", "ne", "lt", "le", "gt", "ge", "masked_eq"}

// cond decodes one [[rule.arg]] table: a condition on an argument.
func (d *decoder) cond(key string, t map[string]any) (c seccomp.Cond, ok bool) {
	before := len(d.probs)
	for _, k := range sortedKeys(t) {
		v, kkey := t[k], joinKey(key, k)
		switch k {
		case "index":
			n, isInt := v.(int64)
			switch {
			case !isInt:
				d.fail(kkey, "want an integer, got %s", typeName(v))
			case n < 0 || n > 5:
				d.failValue(kkey, n, errors.New("syscalls have arguments 0 to 5"))
			default:
				c.Index = uint(n)
			}
		case "op":
			s, isStr := d.str(kkey, v)
			if !isStr {
				continue
			}
			op, known := seccomp.ParseOp(s)
			if !known {
				msg := "unknown op: want " + opChoices
				if g := suggest(s, opNames); g != "" {
					msg += fmt.Sprintf("; did you mean %q?", g)
				}
				d.failValue(kkey, s, errors.New(msg))
			}
			c.Op = op
		case "value":
			c.Value, _ = d.argValue(kkey, v)
		case "mask":
			c.Mask, _ = d.argValue(kkey, v)
		default:
			d.unknown(kkey, k, argKeys)
		}
	}
	for _, k := range []string{"index", "op", "value"} {
		if _, has := t[k]; !has {
			d.fail(key+"."+k, "required")
		}
	}
	_, hasMask := t["mask"]
	switch {
	case c.Op == 0:
	case hasMask && c.Op != seccomp.MaskedEq:
		d.fail(key+".mask", `only with op = "masked_eq"`)
	case !hasMask && c.Op == seccomp.MaskedEq:
		d.fail(key+".mask", "required for masked_eq: the bits to compare")
	case c.Op == seccomp.MaskedEq && len(d.probs) == before && c.Mask == 0:
		d.fail(key+".mask", "0 compares no bits: the condition would always hold")
	case c.Op == seccomp.MaskedEq && len(d.probs) == before && c.Value&^c.Mask != 0:
		d.fail(key+".value", "%#x has bits outside mask %#x: the condition could never hold", c.Value, c.Mask)
	}
	return c, len(d.probs) == before
}

// argValue decodes a value compared with an argument: a non-negative
// integer, or a string for what TOML's signed integers cannot hold.
func (d *decoder) argValue(key string, v any) (uint64, bool) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			d.failValue(key, v, errors.New(`must not be negative: arguments compare as unsigned 64-bit numbers; write "0xffffffffffffffff" for -1`))
			return 0, false
		}
		return uint64(v), true
	case string:
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			d.failValue(key, v, errors.New(`want an unsigned 64-bit number, such as "0x80000000"`))
			return 0, false
		}
		return n, true
	}
	d.fail(key, `want an integer, or a string such as "0xffffffffffffffff", got %s`, typeName(v))
	return 0, false
}

// maxErrno is the largest error an errno action can return (SECCOMP_RET_DATA
// holds more, but the kernel treats -4096..-1 as errors).
const maxErrno = 4095

// errnoNames maps this architecture's error names to their numbers.
var errnoNames = sync.OnceValue(func() map[string]int {
	m := map[string]int{}
	for n := 1; n <= maxErrno; n++ {
		if name := unix.ErrnoName(syscall.Errno(n)); name != "" {
			m[name] = n
		}
	}
	// Names the table lists under another name with the same number.
	for alias, name := range map[string]string{"EWOULDBLOCK": "EAGAIN", "EDEADLOCK": "EDEADLK", "ENOTSUP": "EOPNOTSUPP"} {
		if n, ok := m[name]; ok {
			m[alias] = n
		}
	}
	return m
})

// errnoValue looks an error name up ("EPERM").
func errnoValue(name string) (int, bool) {
	n, ok := errnoNames()[name]
	return n, ok
}

// checkPolicyRef checks what a profile's policy (or --seccomp) names: a
// policy, or "none".
func checkPolicyRef(s string) error {
	if s == policyNone {
		return nil
	}
	return checkPolicyName(s)
}

// checkPolicyParent checks what a policy extends: a policy, never "none".
func checkPolicyParent(s string) error {
	if s == policyNone {
		return errors.New("means no filter at all: there is nothing to extend")
	}
	return checkPolicyName(s)
}

func checkPolicyName(s string) error {
	if !validName(s) {
		return errors.New("not a policy name: use letters, digits, '-', '_' and '.'")
	}
	return nil
}

// checkOCIPath checks the path of an OCI seccomp profile: absolute, or
// relative to the profile's directory.
func checkOCIPath(s string) error {
	if err := checkTarget(s); err != nil {
		return err
	}
	if strings.HasPrefix(s, "~") {
		return errors.New("~ is not expanded here: give an absolute path, or one relative to the profile")
	}
	return nil
}

// andList joins words as prose: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// clonePolicy returns a deep copy, so no two holders share rules.
func clonePolicy(p *seccomp.Policy) *seccomp.Policy {
	if p == nil {
		return nil
	}
	c := *p
	c.Rules = slices.Clone(p.Rules)
	for i := range c.Rules {
		c.Rules[i].Names = slices.Clone(c.Rules[i].Names)
		c.Rules[i].Conds = slices.Clone(c.Rules[i].Conds)
	}
	return &c
}
