package tomlstrict

// Locating keys: BurntSushi/toml does not export where a key was defined, so
// go-toml's parser, which reports the byte range of each key and scalar,
// reads the source once more; every key path is mapped to its line and
// column, for problems a user can jump to.

import (
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2/unstable"
)

// locator knows where each key path of one TOML document is defined.
type locator struct {
	src        string
	pos        map[string]int // key path → byte offset of its definition
	vals       map[string]int // key path → byte offset of its value
	lineStarts []int          // byte offset of the start of each line
}

// locate maps the keys of src, which BurntSushi/toml has already accepted;
// should the second parser stop early, keys after that point are not
// found, and a lookup at worst finds an ancestor, or nothing.
func locate(src string) *locator {
	src = strings.TrimPrefix(src, "\ufeff") // as the parser does, so columns agree
	l := &locator{src: src, pos: map[string]int{}, vals: map[string]int{}, lineStarts: lineStarts(src)}
	w := &walker{loc: l, aot: map[string]int{}}
	var p unstable.Parser
	p.Reset([]byte(src))
	table := "" // the resolved path of the current table
	for p.NextExpression() {
		switch e := p.Expression(); e.Kind {
		case unstable.KeyValue:
			w.keyValue(table, e)
		case unstable.Table, unstable.ArrayTable:
			table = w.header(e)
		}
	}
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
// prefix.
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

// walker records where the parser's expressions define keys.
type walker struct {
	loc *locator
	// aot counts the elements of each array of tables so far, by resolved
	// path, so "[[mount]]" becomes mount[1], mount[2], ...
	aot map[string]int
}

// record keeps the first definition of path: a table implied by a dotted key
// or header is located where it first appears.
func (w *walker) record(path string, off int) {
	if _, ok := w.loc.pos[path]; !ok {
		w.loc.pos[path] = off
	}
}

// header records "[a.b]" or "[[a.b]]" and returns the table's resolved path.
func (w *walker) header(e *unstable.Node) string {
	path := ""
	for it := e.Key(); it.Next(); {
		k := it.Node()
		path = JoinKey(path, string(k.Data))
		w.record(path, int(k.Raw.Offset))
		if it.IsLast() && e.Kind == unstable.ArrayTable {
			w.aot[path]++
			path = IndexKey(path, w.aot[path])
			// An element is where its "[[" is, before the first key: the
			// parser keeps no range for a header.
			first := e.Key()
			first.Next()
			w.record(path, max(strings.LastIndex(w.loc.src[:first.Node().Raw.Offset], "[["), 0))
		} else if c, ok := w.aot[path]; ok {
			path = IndexKey(path, c)
		}
	}
	return path
}

// keyValue records "a.b = value" inside the table at base, and returns
// where it ends.
func (w *walker) keyValue(base string, e *unstable.Node) int {
	path, end := base, 0
	for it := e.Key(); it.Next(); {
		k := it.Node()
		path = JoinKey(path, string(k.Data))
		w.record(path, int(k.Raw.Offset))
		end = int(k.Raw.Offset + k.Raw.Length)
	}
	if eq := strings.IndexByte(w.loc.src[end:], '='); eq >= 0 {
		v := e.Value()
		w.value(path, v, w.start(v, end+eq+1))
	}
	return int(e.Raw.Offset + e.Raw.Length)
}

// value records where v, which starts at off, is written, and what it
// defines: an array's elements, an inline table's keys. It returns where v
// ends.
func (w *walker) value(path string, v *unstable.Node, off int) int {
	if _, ok := w.loc.vals[path]; !ok {
		w.loc.vals[path] = off
	}
	end := off + 1 // past the "[" or "{"
	switch v.Kind {
	case unstable.Array:
		n := 0
		for it := v.Children(); it.Next(); {
			c := it.Node()
			n++
			elem := IndexKey(path, n)
			start := w.start(c, end)
			w.record(elem, start)
			end = w.value(elem, c, start)
		}
	case unstable.InlineTable:
		for it := v.Children(); it.Next(); {
			end = w.keyValue(path, it.Node())
		}
	default:
		return int(v.Raw.Offset + v.Raw.Length)
	}
	return min(w.skipBlank(end)+1, len(w.loc.src)) // past the "]" or "}"
}

// start is where value v begins: its range's start, or for an array (which
// the parser gives no range) its "[", the first thing after from that is
// not blank, a comma or a comment.
func (w *walker) start(v *unstable.Node, from int) int {
	if v.Kind != unstable.Array {
		return int(v.Raw.Offset)
	}
	return w.skipBlank(from)
}

// skipBlank returns the offset of the first byte at or after i that is not
// white space, a newline, a comma or in a comment.
func (w *walker) skipBlank(i int) int {
	src := w.loc.src
	for i < len(src) {
		switch src[i] {
		case ' ', '\t', '\r', '\n', ',':
			i++
		case '#':
			if j := strings.IndexByte(src[i:], '\n'); j >= 0 {
				i += j
			} else {
				i = len(src)
			}
		default:
			return i
		}
	}
	return i
}
