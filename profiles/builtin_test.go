package profiles

import (
	"reflect"
	"testing"

	"github.com/jail-sandbox/jail/internal/searchpath"
	"github.com/jail-sandbox/jail/internal/testfiles"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// TestBuiltinLayersGenerated keeps builtin_layers.go, the built-ins decoded
// ahead of time, in step with the .toml files they come from: after editing
// a built-in profile, run go generate ./profiles.
func TestBuiltinLayersGenerated(t *testing.T) {
	src, err := builtinLayersFile()
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Fresh(t, "builtin_layers.go", src, "go generate ./profiles")
}

// TestBuiltinLayersDecodeAlike checks the generated layers against decoding
// the TOML at run time, field by field.
func TestBuiltinLayersDecodeAlike(t *testing.T) {
	for _, name := range builtinNames {
		data, _ := builtins.ReadFile(name + ".toml")
		doc := tomlstrict.NewDoc("built-in/"+name+".toml", data)
		want, _ := decodeLayer(doc)
		got, probs, ok := load(searchpath.Source{File: doc.File, ID: "built-in:" + name, Data: data})
		if !ok || len(probs) > 0 {
			t.Fatalf("%s: %v", name, probs)
		}
		got.Doc = want.Doc
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: generated layer differs from the decoded TOML:\n got %+v\nwant %+v", name, got, want)
		}
	}
}
