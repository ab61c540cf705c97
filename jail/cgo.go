package jail

// The C files of this package run before the Go runtime, from the
// constructor in init.c: the runner (runner.c, userns.c) and the init stage
// (init.c, exec.c, pid1.c, fds.c, netns.c).

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"

// The constructor in init.c calls plancache's C side.
import _ "jail/plancache"
