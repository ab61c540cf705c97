package profiles

// Locating keys: BurntSushi/toml does not export where a key was defined, so
// this scanner reads the source once more and maps every key path to its
// line and column, for problems a user can jump to.

import (
	"sort"
	"strings"
)

// maxLocateDepth bounds nesting of arrays and inline tables, so a hostile
// file cannot exhaust the stack; deeper values are skipped, not located.
const maxLocateDepth = 200

// locator knows where each key path of one TOML document is defined.
type locator struct {
	src        string
	pos        map[string]int // key path → byte offset of its definition
	vals       map[string]int // key path → byte offset of its value
	lineStarts []int          // byte offset of the start of each line
}

// locate scans src, which BurntSushi/toml has already accepted; on other
// input it does its best and never fails, so a lookup at worst finds nothing.
func locate(src string) *locator {
	src = strings.TrimPrefix(src, "\ufeff") // as the parser does, so columns agree
	l := &locator{src: src, pos: map[string]int{}, vals: map[string]int{}, lineStarts: lineStarts(src)}
	s := &scanner{src: src, loc: l, aot: map[string]int{}}
	s.document()
	return l
}

// lineStarts returns the byte offset where each line of src starts.
func lineStarts(src string) []int {
	starts := []int{0}
	for i := 0; i < len(src); i++ {
		if src[i] == '\n' {
			starts = append(starts, i+1)
		}
	}
	return starts
}

// find returns the line and column (1-based, column in bytes as the parser
// counts) of path, or of its nearest located ancestor, so a problem about a
// missing key points at its table; 0, 0 when nothing matches.
func (l *locator) find(path string) (line, col int) {
	for path != "" {
		if off, ok := l.pos[path]; ok {
			return l.lineCol(off)
		}
		path = parentKey(path)
	}
	return 0, 0
}

// valueHasPrefix reports whether the value at path is written starting with
// prefix, for the few checks that depend on how a value was spelled (an
// integer mode written in decimal rather than octal).
func (l *locator) valueHasPrefix(path, prefix string) bool {
	off, ok := l.vals[path]
	return ok && strings.HasPrefix(l.src[off:], prefix)
}

// lineCol turns a byte offset into a 1-based line and column.
func (l *locator) lineCol(off int) (line, col int) {
	i := sort.Search(len(l.lineStarts), func(i int) bool { return l.lineStarts[i] > off }) - 1
	if i < 0 {
		i = 0
	}
	return i + 1, off - l.lineStarts[i] + 1
}

// scanner walks a TOML document, recording where keys are defined.
type scanner struct {
	src string
	i   int
	loc *locator
	// aot counts the elements of each array of tables so far, by resolved
	// path, so "[[mount]]" becomes mount[1], mount[2], ...
	aot map[string]int
}

func (s *scanner) eof() bool { return s.i >= len(s.src) }

func (s *scanner) peek() byte {
	if s.eof() {
		return 0
	}
	return s.src[s.i]
}

func (s *scanner) hasPrefix(p string) bool { return strings.HasPrefix(s.src[s.i:], p) }

// record keeps the first definition of path: a table implied by a dotted key
// or header is located where it first appears.
func (s *scanner) record(path string, off int) {
	if _, ok := s.loc.pos[path]; !ok {
		s.loc.pos[path] = off
	}
}

func (s *scanner) recordValue(path string) {
	if _, ok := s.loc.vals[path]; !ok {
		s.loc.vals[path] = s.i
	}
}

func (s *scanner) skipSpace() {
	for !s.eof() && (s.src[s.i] == ' ' || s.src[s.i] == '\t') {
		s.i++
	}
}

// skipBlank skips spaces, newlines and comments, as allowed inside arrays and
// (TOML 1.1) inline tables.
func (s *scanner) skipBlank() {
	for !s.eof() {
		switch s.src[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		case '#':
			s.skipLine()
		default:
			return
		}
	}
}

// skipLine moves to the start of the next line.
func (s *scanner) skipLine() {
	if j := strings.IndexByte(s.src[s.i:], '\n'); j >= 0 {
		s.i += j + 1
	} else {
		s.i = len(s.src)
	}
}

// document scans top-level statements: headers and key/value pairs.
func (s *scanner) document() {
	table := "" // the resolved path of the current table
	for !s.eof() {
		s.skipBlank()
		if s.eof() {
			return
		}
		start := s.i
		if s.peek() == '[' {
			table = s.header()
		} else {
			s.keyValue(table, 0)
		}
		s.skipSpace()
		if s.peek() == '#' || s.i == start {
			// A comment after the statement, or input the scanner does not
			// understand: either way, resume on the next line.
			s.skipLine()
		}
	}
}

// header scans "[a.b]" or "[[a.b]]" and returns the table's resolved path.
func (s *scanner) header() string {
	start := s.i
	isArray := s.hasPrefix("[[")
	if isArray {
		s.i += 2
	} else {
		s.i++
	}
	keys, offs := s.key()
	path := ""
	for n, k := range keys {
		path = joinKey(path, k)
		s.record(path, offs[n])
		if n == len(keys)-1 && isArray {
			s.aot[path]++
			path = indexKey(path, s.aot[path])
			s.record(path, start)
		} else if c, ok := s.aot[path]; ok {
			path = indexKey(path, c)
		}
	}
	s.skipSpace()
	if isArray && s.hasPrefix("]]") {
		s.i += 2
	} else if !isArray && s.peek() == ']' {
		s.i++
	}
	return path
}

// keyValue scans "a.b = value" inside the table at base.
func (s *scanner) keyValue(base string, depth int) {
	keys, offs := s.key()
	if len(keys) == 0 {
		return
	}
	path := base
	for n, k := range keys {
		path = joinKey(path, k)
		s.record(path, offs[n])
	}
	s.skipSpace()
	if s.peek() != '=' {
		return
	}
	s.i++
	s.skipSpace()
	s.recordValue(path)
	s.value(path, depth)
}

// key scans a dotted key and returns its parts and their offsets.
func (s *scanner) key() (keys []string, offs []int) {
	for {
		s.skipSpace()
		off := s.i
		var k string
		switch c := s.peek(); {
		case c == '"':
			end := s.basicEnd(s.i + 1)
			k = unquoteBasic(s.src[s.i+1 : max(end-1, s.i+1)])
			s.i = end
		case c == '\'':
			end := strings.IndexByte(s.src[s.i+1:], '\'')
			if end < 0 {
				s.i = len(s.src)
				return keys, offs
			}
			k = s.src[s.i+1 : s.i+1+end]
			s.i += end + 2
		case isBareKeyByte(c):
			j := s.i
			for j < len(s.src) && isBareKeyByte(s.src[j]) {
				j++
			}
			k = s.src[s.i:j]
			s.i = j
		default:
			return keys, offs
		}
		keys = append(keys, k)
		offs = append(offs, off)
		s.skipSpace()
		if s.peek() != '.' {
			return keys, offs
		}
		s.i++
	}
}

func isBareKeyByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// value scans one value; arrays and inline tables record their elements.
func (s *scanner) value(path string, depth int) {
	if depth > maxLocateDepth {
		s.skipLine()
		return
	}
	switch {
	case s.hasPrefix(`"""`):
		s.i = s.multiEnd(s.i+3, `"""`, true)
	case s.hasPrefix(`'''`):
		s.i = s.multiEnd(s.i+3, `'''`, false)
	case s.peek() == '"':
		s.i = s.basicEnd(s.i + 1)
	case s.peek() == '\'':
		if end := strings.IndexByte(s.src[s.i+1:], '\''); end >= 0 {
			s.i += end + 2
		} else {
			s.i = len(s.src)
		}
	case s.peek() == '[':
		s.i++
		for n := 1; ; n++ {
			s.skipBlank()
			if s.eof() || s.peek() == ']' {
				break
			}
			elem := indexKey(path, n)
			s.record(elem, s.i)
			s.recordValue(elem)
			before := s.i
			s.value(elem, depth+1)
			s.skipBlank()
			if s.peek() == ',' {
				s.i++
			} else if s.i == before {
				break // not a value: give up on this array
			}
		}
		if s.peek() == ']' {
			s.i++
		}
	case s.peek() == '{':
		s.i++
		for {
			s.skipBlank()
			if s.eof() || s.peek() == '}' {
				break
			}
			before := s.i
			s.keyValue(path, depth+1)
			s.skipBlank()
			if s.peek() == ',' {
				s.i++
			} else if s.i == before {
				break
			}
		}
		if s.peek() == '}' {
			s.i++
		}
	default:
		s.bare()
	}
}

// bare scans a number, boolean or date-time; a date and time may be
// separated by one space ("1979-05-27 07:32:00Z").
func (s *scanner) bare() {
	start := s.i
	for !s.eof() && !strings.ContainsRune(" \t\r\n,]}#", rune(s.src[s.i])) {
		s.i++
	}
	tok := s.src[start:s.i]
	if len(tok) == 10 && tok[4] == '-' && tok[7] == '-' &&
		s.i+1 < len(s.src) && s.src[s.i] == ' ' && s.src[s.i+1] >= '0' && s.src[s.i+1] <= '9' {
		s.i++
		s.bare()
	}
}
