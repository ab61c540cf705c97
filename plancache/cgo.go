package plancache

// The C side is all of the cache but the deps' encoding: args.c and key.c
// (the key), dir.c (where it lives), lookup.c (run from the jail binary's
// constructor, before the Go runtime starts) and store.c (run by the
// runner once Go has planned).

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"
