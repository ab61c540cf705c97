package golit

import (
	"go/format"
	"reflect"
	"testing"
	"time"
)

type kind int

type inner struct {
	Name  string
	Kind  kind
	Bits  uint64
	Limit *uint64
	Cores *float64
}

type outer struct {
	title string
	set   map[string]bool
	items []inner
	ptr   *inner
	wait  time.Duration
	month []time.Month
}

func TestExpr(t *testing.T) {
	n, c := uint64(512), 0.5
	v := &outer{
		title: "t", set: map[string]bool{"b": true, "a": false},
		items: []inner{{Name: "x", Kind: 2, Bits: 0x5412}, {Limit: &n, Cores: &c}},
		ptr:   &inner{Name: "y"}, wait: time.Minute, month: []time.Month{time.March},
	}
	w := Writer{Pkg: "github.com/jail-sandbox/jail/internal/golit", Idents: func(v reflect.Value) (string, bool) {
		if v.Type() == reflect.TypeFor[kind]() && v.Int() == 2 {
			return "two", true
		}
		return "", false
	}}
	got, err := format.Source([]byte("var x = " + w.Expr(v)))
	if err != nil {
		t.Fatal(err)
	}
	want := `var x = &outer{title: "t",
	set: map[string]bool{"a": false, "b": true},
	items: []inner{{Name: "x",
		Kind: two,
		Bits: 0x5412},
		{Limit: new(uint64(512)),
			Cores: new(float64(0.5))}},
	ptr:   &inner{Name: "y"},
	wait:  60000000000,
	month: []time.Month{3}}`
	if string(got) != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if imports := w.Imports(); len(imports) != 1 || imports[0] != "time" {
		t.Errorf("imports = %v", imports)
	}
}
