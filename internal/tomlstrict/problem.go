// Package tomlstrict decodes TOML configuration strictly: a file is parsed
// into generic values and walked key by key, so that every problem is
// reported at once, each located in its file (file:line:col) and named by
// its key path ("mount[2].dst"), with a suggestion for a likely typo.
// BurntSushi/toml parses the values and words syntax errors; go-toml's
// parser, which reports byte ranges, locates the keys.
package tomlstrict

// Problems: how a broken file is reported, every fault at once, each located
// in its file so an editor can jump to it.

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Problem is one thing wrong with a file, located in it, so that a user
// fixing a file sees where to look without re-running after each fix.
type Problem struct {
	File      string // the file's path, or "built-in/NAME.toml"
	Line, Col int    // 1-based; 0 when unknown
	Key       string // the key path, e.g. "mount[2].dst"; empty for syntax errors
	Msg       string
}

// String formats the problem as "file:line:col: key: msg", the shape compilers
// use, so editors and terminals turn it into a link.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
		if p.Col > 0 {
			fmt.Fprintf(&b, ":%d", p.Col)
		}
	}
	b.WriteString(": ")
	if p.Key != "" {
		b.WriteString(p.Key)
		b.WriteString(": ")
	}
	b.WriteString(p.Msg)
	return b.String()
}

// Errors is every problem found in a file and the files it extends, so one
// run reports them all rather than one per attempt.
type Errors []Problem

// Error joins the problems one per line.
func (e Errors) Error() string {
	lines := make([]string, len(e))
	for i, p := range e {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// sortByPosition orders one file's problems top to bottom, so the report
// reads like the file; problems at the same place keep their order.
func (e Errors) sortByPosition() {
	slices.SortStableFunc(e, func(a, b Problem) int {
		return cmp.Or(cmp.Compare(a.Line, b.Line), cmp.Compare(a.Col, b.Col))
	})
}
