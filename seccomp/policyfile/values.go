package policyfile

// Values: the names the language gives actions, errors, comparisons and
// policies, read strictly.

import (
	"errors"
	"fmt"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/internal/searchpath"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// The policies every jail knows by name, and the names of the others.
const (
	Default    = "default" // what a profile that names none gets
	None       = "none"    // no filter at all: only when a profile says so
	InlineName = "inline"  // the Name of a policy written in a profile
	OCIPrefix  = "oci:"    // the Name of an imported one: "oci:" and its path
)

// actionChoices is how a message lists the actions.
const actionChoices = `"allow", "kill_process", "kill_thread", "trap", "log", "notify" or { errno = N }`

// actionNames are the actions written as a plain name, for suggestions.
var actionNames = []string{"allow", "kill_process", "kill_thread", "trap", "log", "notify"}

// opChoices is how a message lists the comparisons.
const opChoices = "eq, ne, lt, le, gt, ge or masked_eq"

// opNames are the comparisons, for suggestions.
var opNames = []string{"eq", "ne", "lt", "le", "gt", "ge", "masked_eq"}

// action decodes an action: its name, or { errno = N }.
func action(d *tomlstrict.Decoder, key string, v any) (seccomp.Action, bool) {
	switch v := v.(type) {
	case string:
		k, ok := seccomp.ParseActionKind(v)
		switch {
		case ok && k == seccomp.Errno:
			d.Fail(key, `"errno" needs the error: write { errno = "EPERM" } or { errno = 1 }`)
		case ok:
			return seccomp.Action{Kind: k}, true
		default:
			d.Fail(key, "%q: unknown action: want %s%s", v, actionChoices, tomlstrict.DidYouMean(v, actionNames))
		}
	case map[string]any:
		ok := true
		d.Each(key, v, []string{"errno"}, func(k, _ string, _ any) bool {
			ok = ok && k == "errno"
			return k == "errno"
		})
		e, has := v["errno"]
		if !has {
			d.Fail(key, `want { errno = N }: N from 1 to 4095, or a name such as "EPERM"`)
			return seccomp.Action{}, false
		}
		n, eok := errno(d, tomlstrict.JoinKey(key, "errno"), e)
		return seccomp.Action{Kind: seccomp.Errno, Errno: n}, ok && eok
	default:
		d.Fail(key, "want %s, got %s", actionChoices, tomlstrict.TypeName(v))
	}
	return seccomp.Action{}, false
}

// errno decodes the error an errno action returns: a number or a name.
func errno(d *tomlstrict.Decoder, key string, v any) (int, bool) {
	switch v := v.(type) {
	case int64:
		if v < 1 || v > maxErrno {
			d.FailValue(key, v, fmt.Errorf("want 1 to %d, or a name such as \"EPERM\"", maxErrno))
			return 0, false
		}
		return int(v), true
	case string:
		if n, ok := errnoNames()[v]; ok {
			return n, true
		}
		d.FailValue(key, v, errors.New(`unknown error name: want one such as "EPERM", "ENOSYS" or "EACCES"`))
		return 0, false
	}
	d.Fail(key, `want a number or a name such as "EPERM", got %s`, tomlstrict.TypeName(v))
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

// CheckRef checks what a profile's policy (or --seccomp) names: a policy,
// or "none".
func CheckRef(s string) error {
	if s == None {
		return nil
	}
	return checkName(s)
}

// checkParent checks what a policy extends: a policy, never "none".
func checkParent(s string) error {
	if s == None {
		return errors.New("means no filter at all: there is nothing to extend")
	}
	return checkName(s)
}

func checkName(s string) error {
	if !searchpath.ValidName(s) {
		return errors.New("not a policy name: use letters, digits, '-', '_' and '.'")
	}
	return nil
}
