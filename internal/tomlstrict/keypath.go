package tomlstrict

// Key paths and strings as TOML writes them: how problems name a key
// ("user.host_uid", "env.set.PATH", "mount[2].dst"), shared by the decoder
// and the locator so that a problem's key finds its position, and how an
// encoder quotes a string.

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// JoinKey appends one key to a key path the way problems print it: dotted,
// with keys that are not bare quoted, as TOML would write them.
func JoinKey(path, key string) string {
	if !isBareKey(key) {
		key = Quote(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// IndexKey names the n-th (1-based) element of the array at path, as in
// "mount[2]": the index a user counts in the file.
func IndexKey(path string, n int) string {
	return path + "[" + strconv.Itoa(n) + "]"
}

func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isBareKeyByte(s[i]) {
			return false
		}
	}
	return true
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// parentKey strips the last element of a key path: "a.b[2]" → "a.b",
// "a.b" → "a", `a."x.y"` → "a".
func parentKey(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndexByte(path, '['); i >= 0 {
			return path[:i]
		}
		return ""
	}
	cut := -1
	inQuote := false
	for i := 0; i < len(path); i++ {
		switch c := path[i]; {
		case c == '\\' && inQuote:
			i++
		case c == '"':
			inQuote = !inQuote
		case c == '.' && !inQuote:
			cut = i
		}
	}
	if cut < 0 {
		return ""
	}
	return path[:cut]
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

// QuoteList writes ss as a TOML array of basic strings, on one line.
func QuoteList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = Quote(s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// Quote writes s as a TOML basic string. Control characters are escaped
// (TOML forbids them raw); bytes that are not UTF-8, which no decoded file
// holds, become U+FFFD so the output is always valid TOML.
func Quote(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\f':
			b.WriteString(`\f`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r) // utf8.RuneError for an invalid byte: U+FFFD
		}
	}
	b.WriteByte('"')
	return b.String()
}
