package sessions

// Branch names a session's repository is given or exported to: checked
// here, refused rather than mangled, before git sees them.

import (
	"fmt"
	"strings"
)

// maxBranch bounds a branch name: a ref is a file path on the host, and a
// name this long is a mistake or an attack, not a branch.
const maxBranch = 200

// CheckBranch refuses a branch name git would refuse (git check-ref-format
// --branch) or could read as something else: "..", control characters,
// space and ~^:?*[\, a leading '-' (an option), "@{" (a reflog
// expression), "@" alone, a component that starts with '.' or ends with
// ".lock", "//", a trailing '/' or '.', more than 200 bytes. Only
// printable ASCII: a name that looks like another one on a terminal is
// refused too.
func CheckBranch(name string) error {
	bad := func(why string) error {
		return fmt.Errorf("branch name %q: %s", name, why)
	}
	switch {
	case name == "":
		return bad("empty")
	case len(name) > maxBranch:
		return bad(fmt.Sprintf("longer than %d bytes", maxBranch))
	case name[0] == '-':
		return bad("starts with '-'")
	case name == "@" || name == "HEAD":
		return bad("names no branch")
	case strings.Contains(name, ".."):
		return bad(`holds ".."`)
	case strings.Contains(name, "@{"):
		return bad(`holds "@{"`)
	case strings.Contains(name, "//"):
		return bad(`holds "//"`)
	case strings.HasSuffix(name, "/"), strings.HasSuffix(name, "."):
		return bad("ends with '/' or '.'")
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if c < 0x21 || c > 0x7e {
			return bad(fmt.Sprintf("byte %#02x: want printable ASCII without spaces", c))
		}
		if strings.IndexByte(`~^:?*[\`, c) >= 0 {
			return bad(fmt.Sprintf("holds %q", c))
		}
	}
	for _, part := range strings.Split(name, "/") {
		if part == "" {
			return bad("starts with '/' or holds an empty component")
		}
		if strings.HasPrefix(part, ".") || strings.HasSuffix(part, ".lock") {
			return bad(fmt.Sprintf("component %q starts with '.' or ends with \".lock\"", part))
		}
	}
	return nil
}
