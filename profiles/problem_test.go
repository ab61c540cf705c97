package profiles

import (
	"errors"
	"reflect"
	"slices"
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
		_, probs := decodeLayer("x.toml", []byte(tc.src))
		if len(probs) != 1 || probs[0].String() != tc.want {
			t.Errorf("decode(%q) = %v, want %s", tc.src, probs, tc.want)
		}
	}
}

// TestSchemaTags keeps the Go fields' tags, the schema key tables and the
// encoder in step: every key Encode writes is a known key, and every tag is
// one.
func TestSchemaTags(t *testing.T) {
	check := func(typ reflect.Type, keys []string) {
		for i := range typ.NumField() {
			tag := typ.Field(i).Tag.Get("toml")
			if typ.Field(i).IsExported() && tag != "-" && !slices.Contains(keys, tag) {
				t.Errorf("%s.%s has tag %q, not a key of %v", typ.Name(), typ.Field(i).Name, tag, keys)
			}
		}
	}
	check(reflect.TypeFor[Profile](), topKeys)
	check(reflect.TypeFor[User](), userKeys)
	check(reflect.TypeFor[Env](), envKeys)
	check(reflect.TypeFor[Limits](), limitKeys)
	check(reflect.TypeFor[Network](), networkKeys)
	check(reflect.TypeFor[Mount](), mountKeys)
	check(reflect.TypeFor[Seccomp](), seccompKeys)
	for _, r := range rlimits {
		if !slices.Contains(limitKeys, r.key) || (&Limits{}).rlimit(r.key) == nil {
			t.Errorf("rlimit %q is not wired up", r.key)
		}
	}
	for _, n := range mountTypeNames {
		if _, ok := mountTypes[n]; !ok {
			t.Errorf("mount type %q has no entry", n)
		}
	}
	if len(mountTypeNames) != len(mountTypes) {
		t.Error("mountTypeNames and mountTypes differ")
	}
	if !strings.Contains(typesWith("mode"), "tmpfs, dir and file") {
		t.Errorf("typesWith(mode) = %q", typesWith("mode"))
	}
}
