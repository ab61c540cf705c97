package policyfile

// The built-in policies decoded ahead of time: builtin_layers.go holds each
// one's Def as Go, so a run that uses one does not parse TOML.
// TestBuiltinDefsGenerated fails when the file is stale; should a change to
// the types stop it compiling, empty its map and run go generate.

//go:generate go run -tags jailgen github.com/jail-sandbox/jail/internal/builtingen policyfile

import (
	"fmt"
	"reflect"
	"strings"

	"github.com/jail-sandbox/jail/internal/golit"
	"github.com/jail-sandbox/jail/internal/tomlstrict"
	"github.com/jail-sandbox/jail/seccomp"
)

// builtinDefsFile returns builtin_layers.go as go generate writes it,
// before gofmt.
func builtinDefsFile() (string, error) {
	// The generated code names the seccomp package's constants.
	actions := map[seccomp.ActionKind]string{
		seccomp.Allow: "Allow", seccomp.Errno: "Errno", seccomp.KillProcess: "KillProcess",
		seccomp.KillThread: "KillThread", seccomp.Trap: "Trap", seccomp.Log: "Log", seccomp.Notify: "Notify",
	}
	ops := map[seccomp.Op]string{
		seccomp.Eq: "Eq", seccomp.Ne: "Ne", seccomp.Lt: "Lt", seccomp.Le: "Le",
		seccomp.Gt: "Gt", seccomp.Ge: "Ge", seccomp.MaskedEq: "MaskedEq",
	}
	w := golit.Writer{Pkg: "github.com/jail-sandbox/jail/seccomp/policyfile", Idents: func(v reflect.Value) (string, bool) {
		var name string
		switch v.Type() {
		case reflect.TypeFor[seccomp.ActionKind]():
			name = actions[seccomp.ActionKind(v.Int())]
		case reflect.TypeFor[seccomp.Op]():
			name = ops[seccomp.Op(v.Int())]
		default:
			return "", false
		}
		if name == "" {
			panic(fmt.Sprintf("no name for %v", v))
		}
		return "seccomp." + name, true
	}}
	var b strings.Builder
	b.WriteString("// builtinDefs are the built-in policies, by source id.\n")
	b.WriteString("var builtinDefs = map[string]func() *Def{\n")
	for _, name := range builtinNames() {
		file := dir + "/" + name + ".toml"
		data, err := builtins.ReadFile("builtin/" + name + ".toml")
		if err != nil {
			return "", err
		}
		def, probs, _ := decodeFile(tomlstrict.NewDoc("built-in/"+file, data))
		if len(probs) > 0 {
			return "", probs
		}
		fmt.Fprintf(&b, "%q: func() *Def {\nreturn %s\n},\n", "built-in:"+file, w.Expr(def))
	}
	b.WriteString("}\n")
	return w.File("policyfile", b.String()), nil
}
