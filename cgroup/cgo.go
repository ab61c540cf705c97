package cgroup

// The C side (cg.c) is the runner's, which runs before the Go runtime.

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"
