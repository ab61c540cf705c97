package jail

// The C files of this package are the init stage (init.c, exec.c, pid1.c):
// jail re-executes itself in the new namespaces and this code, run as a
// constructor before the Go runtime, builds the jail and execs the command.

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"
