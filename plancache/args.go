package plancache

import "strings"

// runFlags are the flags of `jail run` that take a value, boolFlags those
// that do not (a value only after "="); a test checks both against
// main.go's flags and args.c's lists.
var (
	runFlags = []string{
		"profile", "p", "workspace", "bind", "ro-bind", "tmpfs", "env", "keep-env",
		"cwd", "hostname", "time-limit", "status-json", "seccomp",
		"memory", "pids", "cpu", "max-output", "limits-mode", "network", "allow", "pin-host", "session", "audit-log", "secrets",
	}
	boolFlags = []string{"seccomp-audit"}
)

// RunFlags returns the flags an invocation may carry and still be cached:
// those taking a value, then the boolean ones.
func RunFlags() (valued, boolean []string) {
	return append([]string(nil), runFlags...), append([]string(nil), boolFlags...)
}

// walk reads jail's arguments (argv without the command) as the Go flag
// parser does: an optional "run", then run flags, each with its value
// (after "=" or as the next argument). Anything else makes the invocation
// uncacheable (ok false): Go alone decides what it means. args.c's
// plancache_args is the same walk.
func walk(argv []string, fn func(name, value string)) (ok bool) {
	a := argv[1:]
	if len(a) > 0 && a[0] == "run" {
		a = a[1:]
	}
	for i := 0; i < len(a); i++ {
		tok := a[i]
		if len(tok) < 2 || tok[0] != '-' {
			return false
		}
		name := strings.TrimPrefix(tok[1:], "-")
		if name == "" || name[0] == '-' || name[0] == '=' {
			return false
		}
		value, hasValue := "", false
		if n, v, found := strings.Cut(name, "="); found {
			name, value, hasValue = n, v, true
		}
		known, isBool := false, false
		for _, f := range runFlags {
			known = known || f == name
		}
		for _, f := range boolFlags {
			isBool = isBool || f == name
		}
		if !known && !isBool {
			return false
		}
		if name == "session" {
			return false // a session's run locks it and may make it: Go's, every time
		}
		if isBool && !hasValue {
			value = "true"
		} else if !hasValue {
			if i+1 >= len(a) {
				return false // Go: flag needs an argument
			}
			i++
			value = a[i]
		}
		fn(name, value)
	}
	return true
}
