package profiles

// Key paths: how problems name a key ("user.host_uid", "env.set.PATH",
// "mount[2].dst"), shared by the decoder and the locator so that a problem's
// key finds its position.

import (
	"strconv"
	"strings"
)

// joinKey appends one key to a key path the way problems print it: dotted,
// with keys that are not bare quoted, as TOML would write them.
func joinKey(path, key string) string {
	if !isBareKey(key) {
		key = quoteString(key)
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// indexKey names the n-th (1-based) element of the array at path, as in
// "mount[2]": the index a user counts in the file.
func indexKey(path string, n int) string {
	return path + "[" + strconv.Itoa(n) + "]"
}

func isBareKey(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
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
