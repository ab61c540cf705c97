package policyfile

import (
	"reflect"
	"testing"

	"github.com/jail-sandbox/jail/internal/searchpath"
	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// TestBuiltinDefsGenerated keeps builtin_layers.go, the built-in policies
// decoded ahead of time, in step with the .toml files they come from: after
// editing a built-in policy, run go generate ./seccomp/policyfile.
func TestBuiltinDefsGenerated(t *testing.T) {
	src, err := builtinDefsFile()
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Fresh(t, "builtin_layers.go", src, "go generate ./seccomp/policyfile")
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
