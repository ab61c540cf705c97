package plancache

import "strings"

// runFlags are the flags of `jail run`, all of which take a value; a test
// checks them against main.go's and args.c's lists.
var runFlags = []string{
	"profile", "p", "workspace", "bind", "ro-bind", "tmpfs", "env", "keep-env",
	"cwd", "hostname", "time-limit", "status-json",
}

// RunFlags returns the flags an invocation may carry and still be cached.
func RunFlags() []string { return append([]string(nil), runFlags...) }

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
		known := false
		for _, f := range runFlags {
			known = known || f == name
		}
		if !known {
			return false
		}
		if !hasValue {
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
