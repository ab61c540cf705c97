package tomlstrict

import (
	"testing"

	"github.com/BurntSushi/toml"
)

func TestParentKey(t *testing.T) {
	for in, want := range map[string]string{
		"a":             "",
		"a.b":           "a",
		"a.b[2]":        "a.b",
		"a.b[2].c":      "a.b[2]",
		`a."x.y"`:       "a",
		`a."x\".y".z`:   `a."x\".y"`,
		`"a.b"`:         "",
		"mount[10].dst": "mount[10]",
	} {
		if got := parentKey(in); got != want {
			t.Errorf("parentKey(%s) = %q, want %q", in, got, want)
		}
	}
}

func TestJoinKey(t *testing.T) {
	for _, tc := range []struct{ path, key, want string }{
		{"", "a", "a"},
		{"env.set", "PATH", "env.set.PATH"},
		{"env.set", "A B", `env.set."A B"`},
		{"env.set", "", `env.set.""`},
		{"x", `q"uote`, `x."q\"uote"`},
	} {
		if got := JoinKey(tc.path, tc.key); got != tc.want {
			t.Errorf("JoinKey(%q, %q) = %s, want %s", tc.path, tc.key, got, tc.want)
		}
	}
}

func TestHeaderName(t *testing.T) {
	for in, want := range map[string]string{"rule": "rule", "rule[2].arg": "rule.arg", "seccomp.rule[1].arg[3]": "seccomp.rule.arg"} {
		if got := headerName(in); got != want {
			t.Errorf("headerName(%s) = %s, want %s", in, got, want)
		}
	}
}

func TestQuote(t *testing.T) {
	for _, s := range []string{
		"", "plain", `"`, `\`, "\b\t\n\f\r", "\x00\x01\x1f\x7f", "ünï ☃ 𝄞", `\u0041`, `'''`, `"""`,
	} {
		var v struct{ S string }
		if _, err := toml.Decode("S = "+Quote(s), &v); err != nil || v.S != s {
			t.Errorf("Quote(%q) = %s decodes to %q, %v", s, Quote(s), v.S, err)
		}
	}
	if got := Quote("bad\xffbyte"); got != "\"bad\uFFFDbyte\"" {
		t.Errorf("Quote(invalid UTF-8) = %s", got)
	}
}

func TestSuggest(t *testing.T) {
	known := []string{"size", "mode", "src", "dst"}
	for in, want := range map[string]string{"sise": "size", "SIZE": "size", "mod": "mode", "x": "", "content": "", "dest": "dst"} {
		if got := Suggest(in, known); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestQuoteList(t *testing.T) {
	for _, ss := range [][]string{nil, {"one"}, {"a", `"b"`, "c\nd"}} {
		var v struct{ L []string }
		if _, err := toml.Decode("L = "+QuoteList(ss), &v); err != nil || len(v.L) != len(ss) {
			t.Fatalf("QuoteList(%q) = %s decodes to %q, %v", ss, QuoteList(ss), v.L, err)
		}
		for i := range ss {
			if v.L[i] != ss[i] {
				t.Errorf("QuoteList(%q)[%d] decodes to %q", ss, i, v.L[i])
			}
		}
	}
	if got := QuoteList([]string{"a", "b"}); got != `["a", "b"]` {
		t.Errorf("QuoteList = %s", got)
	}
}
