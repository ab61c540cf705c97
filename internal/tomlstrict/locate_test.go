package tomlstrict

import (
	"fmt"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// locateSample exercises what the locator must understand. Every line is
// valid TOML (the test checks that BurntSushi accepts it first).
const locateSample = `# a comment with key = "value" and [table]
a = 1 # trailing comment
"quoted key" = 2
'lit.key' = 3
b.c.d = 4
  indented = "x"
ml = """
not = "a key"
[not.a.table]
"""
ml2 = """ends with quotes"""""
lit = '''
[[not.an.array]]
'''
s = "has # and = and \" inside"
arr = [1, [2, 3], { q = 1 }, # comment
  "x", # comment
]
dt = 1979-05-27 07:32:00Z
after = 1

[t]
x = 1
inl = { a = { b = 1 }, c.d = 2 }

[[aot]]
k = 1

[[aot]]
k = 2

[[aot.sub]]
m = 1

[aot.tab]
n = 1

[ spaced . "h e" ]
v = true

[esc."\u0041B"]
w = 1
`

func TestLocate(t *testing.T) {
	var m map[string]any
	if _, err := toml.Decode(locateSample, &m); err != nil {
		t.Fatalf("sample is not TOML: %v", err)
	}
	l := locate(locateSample)
	for _, tc := range []struct {
		path string
		pos  string // line:col
	}{
		{"a", "2:1"},
		{`"quoted key"`, "3:1"},
		{`"lit.key"`, "4:1"},
		{"b", "5:1"},
		{"b.c", "5:3"},
		{"b.c.d", "5:5"},
		{"indented", "6:3"},
		{"ml", "7:1"},
		{"ml2", "11:1"},
		{"lit", "12:1"},
		{"s", "15:1"},
		{"arr", "16:1"},
		{"arr[1]", "16:8"},
		{"arr[2]", "16:11"},
		{"arr[2][2]", "16:15"},
		{"arr[3]", "16:19"},
		{"arr[3].q", "16:21"},
		{"arr[4]", "17:3"},
		{"dt", "19:1"},
		{"after", "20:1"},
		{"t", "22:2"},
		{"t.x", "23:1"},
		{"t.inl", "24:1"},
		{"t.inl.a", "24:9"},
		{"t.inl.a.b", "24:15"},
		{"t.inl.c", "24:24"},
		{"t.inl.c.d", "24:26"},
		{"aot", "26:3"},
		{"aot[1]", "26:1"},
		{"aot[1].k", "27:1"},
		{"aot[2]", "29:1"},
		{"aot[2].k", "30:1"},
		{"aot[2].sub[1]", "32:1"},
		{"aot[2].sub[1].m", "33:1"},
		{"aot[2].tab", "35:6"},
		{"aot[2].tab.n", "36:1"},
		{`spaced."h e"`, "38:12"},
		{`spaced."h e".v`, "39:1"},
		{"esc.AB", "41:6"},
		{"esc.AB.w", "42:1"},
		// Missing keys fall back to their nearest located ancestor.
		{"aot[2].sub[1].missing", "32:1"},
		{"t.nope.deeper", "22:2"},
		{"nothing", "0:0"},
		// Text inside strings is not a key.
		{"not", "0:0"},
		{"not.a.table", "0:0"},
	} {
		line, col := l.find(tc.path)
		if got := fmt.Sprintf("%d:%d", line, col); got != tc.pos {
			t.Errorf("find(%s) = %s, want %s", tc.path, got, tc.pos)
		}
	}
}

// TestLocateCRLF checks that Windows line endings do not shift columns.
func TestLocateCRLF(t *testing.T) {
	src := strings.ReplaceAll("a = 1\n[t]\n  b = 2\n", "\n", "\r\n")
	l := locate(src)
	for path, want := range map[string]string{"a": "1:1", "t": "2:2", "t.b": "3:3"} {
		if line, col := l.find(path); fmt.Sprintf("%d:%d", line, col) != want {
			t.Errorf("find(%s) = %d:%d, want %s", path, line, col, want)
		}
	}
}

// TestLocateBOM checks that columns are counted after a UTF-8 BOM, as the
// parser counts them.
func TestLocateBOM(t *testing.T) {
	l := locate("\ufeffa = 1\nb = 2\n")
	if line, col := l.find("a"); line != 1 || col != 1 {
		t.Errorf("find(a) = %d:%d, want 1:1", line, col)
	}
}

// TestLocateNested checks the elements the parser gives no range of their
// own: arrays in arrays, empty ones, and those after a comment or a table.
func TestLocateNested(t *testing.T) {
	src := "a = [ [], # [x]\n  [ 'b]' ], { c = [[1], []] }, [[2]] ]\nd = 1\n"
	l := locate(src)
	for path, want := range map[string]string{
		"a[1]": "1:7", "a[2]": "2:3", "a[3]": "2:13", "a[3].c": "2:15",
		"a[3].c[1]": "2:20", "a[3].c[1][1]": "2:21", "a[3].c[2]": "2:25",
		"a[4]": "2:32", "a[4][1]": "2:33", "a[4][1][1]": "2:34", "d": "3:1",
	} {
		if line, col := l.find(path); fmt.Sprintf("%d:%d", line, col) != want {
			t.Errorf("find(%s) = %d:%d, want %s", path, line, col, want)
		}
	}
}

// FuzzLocate checks the two parsers agree: every key of a document
// BurntSushi/toml accepts is located, and its value where it has one.
func FuzzLocate(f *testing.F) {
	f.Add(locateSample)
	f.Add("a = [ [], # [x]\n  [ 'b]' ], { c = [[1], []] }, [[2]] ]\nd = 0o755\n")
	f.Add("t = { a = 1,\n  b = [\n 2, # c\n ], }\n\"\\e\\x41\" = 1979-05-27 07:32\n")
	f.Fuzz(func(t *testing.T, src string) {
		var m map[string]any
		if _, err := toml.Decode(src, &m); err != nil {
			return
		}
		l := locate(src)
		for k := range m {
			if line, _ := l.find(JoinKey("", k)); line == 0 {
				t.Errorf("key %q not located in\n%q", k, src)
			}
		}
	})
}
