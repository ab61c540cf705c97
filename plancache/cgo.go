package plancache

// cache.c is the lookup side, run from the jail binary's constructor
// before the Go runtime starts.

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"
