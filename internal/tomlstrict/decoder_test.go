package tomlstrict

import (
	"errors"
	"strings"
	"testing"
)

func TestProblemString(t *testing.T) {
	for _, tc := range []struct {
		p    Problem
		want string
	}{
		{Problem{File: "a.toml", Line: 3, Col: 7, Key: "mount[2].dst", Msg: "bad"}, "a.toml:3:7: mount[2].dst: bad"},
		{Problem{File: "a.toml", Line: 3, Msg: "bad"}, "a.toml:3: bad"},
		{Problem{File: "a.toml", Key: "hostname", Msg: "bad"}, "a.toml: hostname: bad"},
		{Problem{File: "a.toml", Msg: "bad"}, "a.toml: bad"},
	} {
		if got := tc.p.String(); got != tc.want {
			t.Errorf("String() = %q, want %q", got, tc.want)
		}
	}
	errs := Errors{{File: "a", Line: 1, Col: 1, Msg: "x"}, {File: "b", Msg: "y"}}
	var err error = errs
	var back Errors
	if err.Error() != "a:1:1: x\nb: y" || !errors.As(err, &back) || len(back) != 2 {
		t.Errorf("Errors = %q", err)
	}
}

// TestSyntaxPosition checks syntax errors' columns, including after a BOM
// and at the end of a line, where the parser's own column is wrong.
func TestSyntaxPosition(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{"a = 1\nb = \n", "x.toml:2:5: expected value but found '\\n' instead"},
		{"\ufeffa = 1\nb = \"open\n", "x.toml:2:10: strings cannot contain newlines"},
		{"a = 1\na = 2\n", "x.toml:2:1: Key 'a' has already been defined."},
		{"x = [1,,]", "x.toml:1:8: unexpected comma"},
	} {
		probs, ok := Decode(NewDoc("x.toml", []byte(tc.src)), func(*Decoder, map[string]any) { t.Error("walked a broken file") })
		if ok || len(probs) != 1 || probs[0].String() != tc.want {
			t.Errorf("Decode(%q) = %v, %v, want %s", tc.src, probs, ok, tc.want)
		}
	}
}

// TestDecoder walks a small language with every getter: each problem is
// reported once, located, and the report reads top to bottom.
func TestDecoder(t *testing.T) {
	src := `name = 1
flag = "yes"
count = "many"
word = "BAD"
list = "x"
sub = 3
[[item]]
size = 1
sise = 2
[extra]
`
	var got []string
	probs, ok := Decode(NewDoc("l.toml", []byte(src)), func(d *Decoder, top map[string]any) {
		d.Each("", top, []string{"name", "flag", "count", "word", "list", "sub", "item"}, func(k, key string, v any) bool {
			switch k {
			case "name":
				d.Str(key, v)
			case "flag":
				d.Bool(key, v)
			case "count":
				d.Int(key, v)
			case "word":
				d.CheckedStr(key, v, func(s string) error {
					if strings.ToLower(s) != s {
						return errors.New("want lower case")
					}
					return nil
				})
			case "list":
				d.Array(key, v, "words")
			case "sub":
				d.Table(key, v)
			case "item":
				n := d.Count()
				d.EachTable(key, v, func(key string, t map[string]any) {
					d.Each(key, t, []string{"size"}, func(k, key string, v any) bool {
						got = append(got, key)
						return k == "size"
					})
				})
				if d.Count() != n+1 {
					t.Errorf("the item added %d problems, want 1", d.Count()-n)
				}
			default:
				return false
			}
			return true
		})
	})
	want := []string{
		"l.toml:1:1: name: want a string, got an integer",
		"l.toml:2:1: flag: want a boolean, got a string",
		"l.toml:3:1: count: want an integer, got a string",
		`l.toml:4:1: word: "BAD": want lower case`,
		"l.toml:5:1: list: want an array of words, got a string",
		"l.toml:6:1: sub: want a table, got an integer",
		`l.toml:9:1: item[1].sise: unknown key, did you mean "size"?`,
		"l.toml:10:2: extra: unknown key",
	}
	if !ok || probs.Error() != strings.Join(want, "\n") {
		t.Errorf("problems:\n%v\nwant:\n%s", probs, strings.Join(want, "\n"))
	}
	if strings.Join(got, " ") != "item[1].sise item[1].size" {
		t.Errorf("item keys walked: %v", got)
	}
	probs, _ = Decode(NewDoc("l.toml", []byte("rule = 1\n")), func(d *Decoder, top map[string]any) {
		d.EachTable("rule", top["rule"], func(string, map[string]any) { t.Error("walked an integer") })
	})
	if probs.Error() != "l.toml:1:1: rule: want an array of tables ([[rule]]), got an integer" {
		t.Errorf("EachTable(1): %v", probs)
	}
}

func TestStrings(t *testing.T) {
	var got []string
	probs, _ := Decode(NewDoc("l.toml", []byte("a = [\"x\", 1, \"Y\"]\nb = 2\n")), func(d *Decoder, top map[string]any) {
		lower := func(s string) error {
			if strings.ToLower(s) != s {
				return errors.New("want lower case")
			}
			return nil
		}
		got = d.Strings("a", top["a"], "words", lower)
		d.Strings("b", top["b"], "words", lower)
	})
	want := "l.toml:1:11: a[2]: want a string, got an integer\nl.toml:1:14: a[3]: \"Y\": want lower case\nl.toml:2:1: b: want an array of words, got an integer"
	if probs.Error() != want || len(got) != 1 || got[0] != "x" {
		t.Errorf("Strings = %q, problems:\n%v\nwant:\n%s", got, probs, want)
	}
}
