package profiles

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

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
