package profiles

// Strings, as the locator sees them: where each kind of TOML string ends,
// and what a quoted key says once its escapes are decoded.

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// basicEnd returns the offset just past the '"' closing a basic string whose
// content starts at i, or the end of the line when it is not closed.
func (s *scanner) basicEnd(i int) int {
	for i < len(s.src) {
		switch s.src[i] {
		case '\\':
			i += 2
			continue
		case '"':
			return i + 1
		case '\n':
			return i
		}
		i++
	}
	return len(s.src)
}

// multiEnd returns the offset just past the delimiter closing a multi-line
// string whose content starts at i; up to two extra quotes before the
// delimiter belong to the content.
func (s *scanner) multiEnd(i int, delim string, escapes bool) int {
	for i < len(s.src) {
		if escapes && s.src[i] == '\\' {
			i += 2
			continue
		}
		if strings.HasPrefix(s.src[i:], delim) {
			i += 3
			for extra := 0; extra < 2 && i < len(s.src) && s.src[i] == delim[0]; extra++ {
				i++
			}
			return i
		}
		i++
	}
	return len(s.src)
}

// unquoteBasic decodes the escapes of a basic string's content; input the
// parser accepted always decodes, anything else is returned as it is.
func unquoteBasic(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c != '\\' || i+1 >= len(s) {
			b.WriteByte(c)
			continue
		}
		i++
		switch s[i] {
		case 'b':
			b.WriteByte('\b')
		case 't':
			b.WriteByte('\t')
		case 'n':
			b.WriteByte('\n')
		case 'f':
			b.WriteByte('\f')
		case 'r':
			b.WriteByte('\r')
		case 'e':
			b.WriteByte(0x1b)
		case '"', '\\':
			b.WriteByte(s[i])
		case 'x', 'u', 'U':
			n := 2
			switch s[i] {
			case 'u':
				n = 4
			case 'U':
				n = 8
			}
			if i+1+n <= len(s) {
				if r, err := strconv.ParseUint(s[i+1:i+1+n], 16, 32); err == nil && utf8.ValidRune(rune(r)) {
					b.WriteRune(rune(r))
					i += n
					continue
				}
			}
			b.WriteByte('\\')
			b.WriteByte(s[i])
		default:
			b.WriteByte('\\')
			b.WriteByte(s[i])
		}
	}
	return b.String()
}
