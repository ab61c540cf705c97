package seccomp

// load.c and notify.c are the C side: the init stage loads the program,
// the runner answers the calls it hands on. Both run before the Go runtime.

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
// #cgo pkg-config: libseccomp
import "C"
