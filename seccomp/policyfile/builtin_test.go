package policyfile

import (
	"bytes"
	"go/format"
	"os"
	"reflect"
	"testing"

	"jail/internal/searchpath"
	"jail/internal/tomlstrict"
)

// TestBuiltinDefsGenerated keeps builtin_layers.go, the built-in policies
// decoded ahead of time, in step with the .toml files they come from: after
// editing a built-in policy, run go generate ./seccomp/policyfile.
func TestBuiltinDefsGenerated(t *testing.T) {
	src, err := builtinDefsFile()
	if err != nil {
		t.Fatal(err)
	}
	want, err := format.Source([]byte(src))
	if err != nil {
		t.Fatalf("generated code: %v\n%s", err, src)
	}
	if have, _ := os.ReadFile("builtin_layers.go"); !bytes.Equal(have, want) {
		t.Fatal("builtin_layers.go is stale: run go generate ./seccomp/policyfile")
	}
}

// TestBuiltinDefsDecodeAlike checks the generated policies against decoding
// the TOML at run time, field by field.
func TestBuiltinDefsDecodeAlike(t *testing.T) {
	names := builtinNames()
	if len(names) != len(builtinDefs) {
		t.Errorf("%d built-in policies, %d generated: run go generate ./seccomp/policyfile", len(names), len(builtinDefs))
	}
	for _, name := range names {
		file := dir + "/" + name + ".toml"
		data, _ := builtins.ReadFile("builtin/" + name + ".toml")
		want, probs, _ := decodeFile(tomlstrict.NewDoc("built-in/"+file, data))
		if len(probs) > 0 {
			t.Fatalf("%s: %v", file, probs)
		}
		got, _, _ := load(searchpath.Source{File: "built-in/" + file, ID: "built-in:" + file, Data: data})
		if !reflect.DeepEqual(got.Def, want) {
			t.Errorf("%s: generated policy differs from the decoded TOML:\n got %+v\nwant %+v", file, got.Def, want)
		}
	}
}
