package tomlstrict

// Documents: one file's name and text, parsed into generic values, with the
// positions of its keys found on first use: a file without problems never
// needs them.

import (
	"errors"
	"strings"

	"github.com/BurntSushi/toml"
)

// Doc is one TOML file, as problems name it.
type Doc struct {
	File string // as problems name it: a path, or "built-in/NAME.toml"
	src  string
	loc  *locator // built on first use
}

// NewDoc holds src, the text of file.
func NewDoc(file string, src []byte) *Doc {
	return &Doc{File: file, src: string(src)}
}

func (d *Doc) locator() *locator {
	if d.loc == nil {
		d.loc = locate(d.src)
	}
	return d.loc
}

// Position returns the line and column of key, or of its nearest ancestor
// written in the file; 0, 0 when none is.
func (d *Doc) Position(key string) (line, col int) {
	return d.locator().find(key)
}

// Problem locates one problem about key in this file.
func (d *Doc) Problem(key, msg string) Problem {
	line, col := d.Position(key)
	return Problem{File: d.File, Line: line, Col: col, Key: key, Msg: msg}
}

// ValueHasPrefix reports whether the value at key is written starting with
// prefix, for the few checks that depend on how a value was spelled (an
// integer mode written in decimal rather than octal).
func (d *Doc) ValueHasPrefix(key, prefix string) bool {
	return d.locator().valueHasPrefix(key, prefix)
}

// parse reads the file's values; a file that is not TOML is one problem.
func (d *Doc) parse() (map[string]any, Errors) {
	var m map[string]any
	if _, err := toml.Decode(d.src, &m); err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			line, col := syntaxPos(d.src, pe)
			return nil, Errors{{File: d.File, Line: line, Col: col, Msg: pe.Message}}
		}
		return nil, Errors{{File: d.File, Msg: err.Error()}}
	}
	return m, nil
}

// syntaxPos returns the line and byte column of a parse error, computed
// from its offset (the parser's own column is off by one line's length when
// the offending byte ends a line).
func syntaxPos(src string, pe toml.ParseError) (line, col int) {
	starts := lineStarts(strings.TrimPrefix(src, "\ufeff")) // the parser drops the BOM too
	line, col = pe.Position.Line, pe.Position.Col
	if line >= 1 && line <= len(starts) {
		if c := pe.Position.Start - starts[line-1] + 1; c >= 1 {
			col = c
		}
	}
	return line, col
}
