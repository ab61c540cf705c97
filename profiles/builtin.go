package profiles

// The built-in profiles decoded ahead of time: builtin_layers.go holds each
// one's layer as Go, so a run that uses one does not parse TOML (a cold
// `jail -p default` spends about a seventh of its CPU time less).
// TestBuiltinLayersGenerated fails when the file is stale; should a change
// to the types stop it compiling, empty its map and run go generate.

//go:generate go run -tags jailgen github.com/jail-sandbox/jail/internal/builtingen profiles

import (
	"fmt"
	"strings"

	"github.com/jail-sandbox/jail/internal/golit"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// builtinLayersFile returns builtin_layers.go as go generate writes it,
// before gofmt.
func builtinLayersFile() (string, error) {
	w := golit.Writer{Pkg: "github.com/jail-sandbox/jail/profiles"}
	var b strings.Builder
	b.WriteString("// builtinLayers are the built-in profiles' layers, by source id.\n")
	b.WriteString("var builtinLayers = map[string]func() *layer{\n")
	for _, name := range builtinNames {
		data, err := builtins.ReadFile(name + ".toml")
		if err != nil {
			return "", err
		}
		l, probs := decodeLayer(tomlstrict.NewDoc("built-in/"+name+".toml", data))
		if len(probs) > 0 {
			return "", probs
		}
		if l.policy != nil {
			return "", fmt.Errorf("%s: a built-in profile names its seccomp policy; the generator does not write inline ones", name)
		}
		l.Doc = nil // the file's text, which load adds
		fmt.Fprintf(&b, "%q: func() *layer {\nreturn %s\n},\n", "built-in:"+name, w.Expr(l))
	}
	b.WriteString("}\n")
	return w.File("profiles", b.String()), nil
}
