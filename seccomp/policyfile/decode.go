// Package policyfile is jail's seccomp policy language: TOML files
// (seccomp/NAME.toml in a profile directory, or built in) and the same
// language written inline in a profile's [seccomp] table. It decodes them
// strictly, every problem located; follows a policy's extends; merges the
// chain into the seccomp package's Policy; and encodes a Policy back.
package policyfile

// Decoding: a policy file's keys, and those the language shares with a
// profile's [seccomp] table (extends, default, rule).

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// Def is one policy as a file, or a profile's [seccomp] table, writes it:
// before its extends is followed.
type Def struct {
	description string
	extends     string
	dflt        *seccomp.Action // nil: not set here
	rules       []seccomp.Rule
}

// The keys each table may hold, for unknown-key errors and suggestions.
var (
	fileKeys = []string{"description", "extends", "default", "rule"} // a policy file's
	ruleKeys = []string{"syscalls", "action", "comment", "arg"}
	argKeys  = []string{"index", "op", "value", "mask"}
)

// decodeFile decodes one policy file, as the language's own: ok is false
// when the file is not TOML at all.
func decodeFile(doc *tomlstrict.Doc) (*Def, tomlstrict.Errors, bool) {
	def := &Def{}
	probs, ok := tomlstrict.Decode(doc, func(d *tomlstrict.Decoder, top map[string]any) {
		d.Each("", top, fileKeys, func(k, key string, v any) bool {
			if k == "description" {
				if s, ok := d.CheckedStr(key, v, tomlstrict.CheckText); ok {
					def.description = s
				}
				return true
			}
			return DecodeKey(d, def, "", k, v)
		})
	})
	return def, probs, ok
}

// DecodeKey decodes into def one key the policy language shares between a
// policy file and a profile's [seccomp] table (at base); false when k is
// not one.
func DecodeKey(d *tomlstrict.Decoder, def *Def, base, k string, v any) bool {
	key := tomlstrict.JoinKey(base, k)
	switch k {
	case "extends":
		if s, ok := d.CheckedStr(key, v, checkParent); ok {
			def.extends = s
		}
	case "default":
		if a, ok := action(d, key, v); ok {
			def.dflt = &a
		}
	case "rule":
		d.EachTable(key, v, func(rkey string, t map[string]any) {
			if r, ok := rule(d, rkey, t); ok {
				def.rules = append(def.rules, r)
			}
		})
	default:
		return false
	}
	return true
}

// rule decodes one [[rule]] table; ok is false when it has any problem.
func rule(d *tomlstrict.Decoder, key string, t map[string]any) (r seccomp.Rule, ok bool) {
	before := d.Count()
	d.Each(key, t, ruleKeys, func(k, kkey string, v any) bool {
		switch k {
		case "syscalls":
			r.Names = syscalls(d, kkey, v)
		case "action":
			r.Action, _ = action(d, kkey, v)
		case "comment":
			if s, ok := d.CheckedStr(kkey, v, tomlstrict.CheckText); ok {
				r.Comment = s
			}
		case "arg":
			compared := map[uint]string{} // argument index -> the condition's key
			d.EachTable(kkey, v, func(ckey string, ct map[string]any) {
				c, ok := cond(d, ckey, ct)
				if !ok {
					return
				}
				if other, dup := compared[c.Index]; dup {
					d.Fail(ckey+".index", "argument %d is already compared by %s: a filter compares each argument once per rule; write a rule for each condition", c.Index, other)
					return
				}
				compared[c.Index] = ckey
				r.Conds = append(r.Conds, c)
			})
		default:
			return false
		}
		return true
	})
	if _, has := t["syscalls"]; !has {
		d.Fail(key+".syscalls", "required: the syscalls and @groups the rule is for")
	}
	if _, has := t["action"]; !has {
		d.Fail(key+".action", `required: what the filter does to them, such as { errno = "EPERM" }`)
	}
	return r, d.Count() == before
}

// syscalls decodes a rule's syscall and group names, each one checked.
func syscalls(d *tomlstrict.Decoder, key string, v any) []string {
	arr, ok := d.Array(key, v, "syscall names and @groups")
	if !ok {
		return nil
	}
	if len(arr) == 0 {
		d.Fail(key, "empty: name at least one syscall or @group")
	}
	var names []string
	for i, x := range arr {
		ekey := tomlstrict.IndexKey(key, i+1)
		s, ok := d.Str(ekey, x)
		if !ok {
			continue
		}
		if err := seccomp.CheckName(s); err != nil {
			msg := err.Error()
			if strings.HasPrefix(s, "@") {
				msg += tomlstrict.DidYouMean(s, slices.Sorted(maps.Keys(seccomp.Groups)))
			}
			d.Fail(ekey, "%s", msg)
			continue
		}
		names = append(names, s)
	}
	return names
}

// cond decodes one [[rule.arg]] table: a condition on an argument.
func cond(d *tomlstrict.Decoder, key string, t map[string]any) (c seccomp.Cond, ok bool) {
	before := d.Count()
	d.Each(key, t, argKeys, func(k, kkey string, v any) bool {
		switch k {
		case "index":
			if n, ok := d.Int(kkey, v); ok && (n < 0 || n > 5) {
				d.FailValue(kkey, n, errors.New("syscalls have arguments 0 to 5"))
			} else if ok {
				c.Index = uint(n)
			}
		case "op":
			s, ok := d.Str(kkey, v)
			if !ok {
				break
			}
			op, known := seccomp.ParseOp(s)
			if !known {
				d.FailValue(kkey, s, errors.New("unknown op: want "+opChoices+tomlstrict.DidYouMean(s, opNames)))
			}
			c.Op = op
		case "value":
			c.Value, _ = argValue(d, kkey, v)
		case "mask":
			c.Mask, _ = argValue(d, kkey, v)
		default:
			return false
		}
		return true
	})
	for _, k := range []string{"index", "op", "value"} {
		if _, has := t[k]; !has {
			d.Fail(key+"."+k, "required")
		}
	}
	_, hasMask := t["mask"]
	switch {
	case c.Op == 0:
	case hasMask && c.Op != seccomp.MaskedEq:
		d.Fail(key+".mask", `only with op = "masked_eq"`)
	case !hasMask && c.Op == seccomp.MaskedEq:
		d.Fail(key+".mask", "required for masked_eq: the bits to compare")
	case c.Op == seccomp.MaskedEq && d.Count() == before && c.Mask == 0:
		d.Fail(key+".mask", "0 compares no bits: the condition would always hold")
	case c.Op == seccomp.MaskedEq && d.Count() == before && c.Value&^c.Mask != 0:
		d.Fail(key+".value", "%#x has bits outside mask %#x: the condition could never hold", c.Value, c.Mask)
	}
	return c, d.Count() == before
}

// argValue decodes a value compared with an argument: a non-negative
// integer, or a string for what TOML's signed integers cannot hold.
func argValue(d *tomlstrict.Decoder, key string, v any) (uint64, bool) {
	switch v := v.(type) {
	case int64:
		if v < 0 {
			d.FailValue(key, v, errors.New(`must not be negative: arguments compare as unsigned 64-bit numbers; write "0xffffffffffffffff" for -1`))
			return 0, false
		}
		return uint64(v), true
	case string:
		n, err := strconv.ParseUint(v, 0, 64)
		if err != nil {
			d.FailValue(key, v, errors.New(`want an unsigned 64-bit number, such as "0x80000000"`))
			return 0, false
		}
		return n, true
	}
	d.Fail(key, `want an integer, or a string such as "0xffffffffffffffff", got %s`, tomlstrict.TypeName(v))
	return 0, false
}
