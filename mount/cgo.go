package mount

// The C files of this package (root.c, dev.c, proc.c) are the init stage's
// side of the mount plan; they run before the Go runtime starts.

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"
