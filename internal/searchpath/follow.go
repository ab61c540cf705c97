package searchpath

// Following extends: a file and the files it extends, child first, each
// problem on the way reported against the file that names the next.

import (
	"fmt"
	"slices"
	"strings"

	"github.com/jail-sandbox/jail/internal/tomlstrict"
)

// maxExtends bounds an extends chain: deep enough for any real layering,
// shallow enough that a mistake is reported rather than followed.
const maxExtends = 8

// Layer is one decoded file of an extends chain.
type Layer interface {
	// Extends is the file it extends, as written; "" for none.
	Extends() string
	// Problem locates a problem about key in the file.
	Problem(key, msg string) tomlstrict.Problem
}

// Follow decodes src with load and the files it extends, found with find
// (from is the file that names ref), child first, collecting every problem
// in every file it reaches. load's ok is false when a file is not TOML at
// all: the chain ends there, with no layers. noun names the files in a
// message ("profiles").
func Follow[L Layer](src Source, noun string,
	load func(Source) (l L, probs tomlstrict.Errors, ok bool),
	find func(ref string, from *Source) (Source, error),
) ([]L, tomlstrict.Errors) {
	var layers []L
	var srcs []Source
	var probs tomlstrict.Errors
	for {
		l, ps, ok := load(src)
		probs = append(probs, ps...)
		if !ok {
			return nil, probs
		}
		layers, srcs = append(layers, l), append(srcs, src)
		extends := l.Extends()
		if extends == "" {
			return layers, probs
		}
		if len(layers) > maxExtends {
			probs = append(probs, l.Problem("extends", fmt.Sprintf("more than %d %s extend one another", maxExtends, noun)))
			return layers, probs
		}
		next, err := find(extends, &srcs[len(srcs)-1])
		if err != nil {
			probs = append(probs, l.Problem("extends", err.Error()))
			return layers, probs
		}
		if i := slices.IndexFunc(srcs, func(s Source) bool { return s.ID == next.ID }); i >= 0 {
			var files []string
			for _, s := range srcs[i:] {
				files = append(files, s.File)
			}
			probs = append(probs, l.Problem("extends", "cycle: "+strings.Join(append(files, next.File), " extends ")))
			return layers, probs
		}
		src = next
	}
}
