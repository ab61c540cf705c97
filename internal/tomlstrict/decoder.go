package tomlstrict

// Decoding: a file's generic values walked by hand rather than decoded into
// a struct, because the struct decoder stops at the first type error and
// every problem must be reported at once. A language's decoder walks each
// table with Each and reads values through the typed getters, which report
// what they refuse.

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// Decoder collects the problems of one document's walk.
type Decoder struct {
	*Doc
	probs Errors
}

// Decode parses doc and walks its top-level table with walk. It returns
// every problem, ordered as the file is; ok is false when doc is not TOML
// at all (then walk is not called).
func Decode(doc *Doc, walk func(d *Decoder, top map[string]any)) (probs Errors, ok bool) {
	m, probs := doc.parse()
	if probs != nil {
		return probs, false
	}
	d := &Decoder{Doc: doc}
	walk(d, m)
	d.probs.sortByPosition()
	return d.probs, true
}

// Count is how many problems the walk has found so far: a caller that
// compares it before and after a part knows whether the part was clean.
func (d *Decoder) Count() int { return len(d.probs) }

// Fail reports a problem about key.
func (d *Decoder) Fail(key, format string, args ...any) {
	d.probs = append(d.probs, d.Problem(key, fmt.Sprintf(format, args...)))
}

// FailValue reports a value that has the right type but a bad value,
// quoting the value as the file wrote it.
func (d *Decoder) FailValue(key string, v any, err error) {
	switch v := v.(type) {
	case string:
		d.Fail(key, "%q: %v", v, err)
	case int64:
		d.Fail(key, "%d: %v", v, err)
	default:
		d.Fail(key, "got %s: %v", TypeName(v), err)
	}
}

// Unknown reports a key its table does not have, with the known key it
// most likely means.
func (d *Decoder) Unknown(key, name string, known []string) {
	if s := Suggest(name, known); s != "" {
		d.Fail(key, "unknown key, did you mean %q?", s)
		return
	}
	d.Fail(key, "unknown key")
}

// Each calls fn for each key of table t, in sorted order, with its key path
// under base; a key fn does not know (it returns false) is reported as
// unknown, against the known keys.
func (d *Decoder) Each(base string, t map[string]any, known []string, fn func(k, key string, v any) bool) {
	for _, k := range SortedKeys(t) {
		if key := JoinKey(base, k); !fn(k, key, t[k]) {
			d.Unknown(key, k, known)
		}
	}
}

// Check reports err, if any, against key and says whether the value is good.
func (d *Decoder) Check(key string, err error) bool {
	if err != nil {
		d.Fail(key, "%v", err)
	}
	return err == nil
}

// CheckValue is Check for a problem with the value v itself, which it
// quotes.
func (d *Decoder) CheckValue(key string, v any, err error) bool {
	if err != nil {
		d.FailValue(key, v, err)
	}
	return err == nil
}

// Str reads a string.
func (d *Decoder) Str(key string, v any) (string, bool) {
	s, ok := v.(string)
	if !ok {
		d.Fail(key, "want a string, got %s", TypeName(v))
	}
	return s, ok
}

// CheckedStr reads a string that check accepts.
func (d *Decoder) CheckedStr(key string, v any, check func(string) error) (string, bool) {
	s, ok := d.Str(key, v)
	return s, ok && d.CheckValue(key, s, check(s))
}

// Bool reads a boolean.
func (d *Decoder) Bool(key string, v any) (bool, bool) {
	b, ok := v.(bool)
	if !ok {
		d.Fail(key, "want a boolean, got %s", TypeName(v))
	}
	return b, ok
}

// Int reads an integer.
func (d *Decoder) Int(key string, v any) (int64, bool) {
	n, ok := v.(int64)
	if !ok {
		d.Fail(key, "want an integer, got %s", TypeName(v))
	}
	return n, ok
}

// Table reads a table.
func (d *Decoder) Table(key string, v any) (map[string]any, bool) {
	t, ok := v.(map[string]any)
	if !ok {
		d.Fail(key, "want a table, got %s", TypeName(v))
	}
	return t, ok
}

// Sub walks v, the value at key, with fn, if it is a table.
func (d *Decoder) Sub(key string, v any, fn func(t map[string]any)) {
	if t, ok := d.Table(key, v); ok {
		fn(t)
	}
}

// Array reads an array of what "of" says ("hosts"), for the message.
func (d *Decoder) Array(key string, v any, of string) ([]any, bool) {
	arr, ok := v.([]any)
	if !ok {
		d.Fail(key, "want an array of %s, got %s", of, TypeName(v))
	}
	return arr, ok
}

// Strings reads an array of strings (of says what they are, for the
// message), each one check accepts; a string refused is reported and left
// out.
func (d *Decoder) Strings(key string, v any, of string, check func(string) error) []string {
	arr, _ := d.Array(key, v, of)
	var out []string
	for i, x := range arr {
		if s, ok := d.CheckedStr(IndexKey(key, i+1), x, check); ok {
			out = append(out, s)
		}
	}
	return out
}

// EachTable calls fn for each element of an array of tables, written as
// [[key]] or inline, that is a table, with the element's key path.
func (d *Decoder) EachTable(key string, v any, fn func(key string, t map[string]any)) {
	var elems []any
	switch v := v.(type) {
	case []map[string]any:
		for _, t := range v {
			elems = append(elems, t)
		}
	case []any:
		elems = v
	default:
		d.Fail(key, "want an array of tables ([[%s]]), got %s", headerName(key), TypeName(v))
		return
	}
	for i, x := range elems {
		ekey := IndexKey(key, i+1)
		if t, ok := d.Table(ekey, x); ok {
			fn(ekey, t)
		}
	}
}

// TypeName names the TOML type of a decoded value, for type errors.
func TypeName(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case int64:
		return "an integer"
	case float64:
		return "a float"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "a table"
	case []map[string]any:
		return "an array of tables"
	}
	return "a date-time"
}

// SortedKeys returns a table's keys in order, so problems come out the
// same on every run.
func SortedKeys(m map[string]any) []string {
	return slices.Sorted(maps.Keys(m))
}

// CheckText refuses a string no file or environment can carry: TOML's
// escapes can write a NUL, and a value must be valid UTF-8.
func CheckText(s string) error {
	switch {
	case strings.IndexByte(s, 0) >= 0:
		return errors.New("a value must not contain NUL")
	case !utf8.ValidString(s):
		return errors.New("a value must be valid UTF-8")
	}
	return nil
}
