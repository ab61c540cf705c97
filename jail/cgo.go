package jail

// The C files of this package run before the Go runtime, from the
// constructor in entry.c, which lists every way the binary is entered: the
// runner (runner.c, and its concerns: runplan.c, report.c, relay.c,
// callerfd.c, signals.c, runlimits.c, proxyctl.c, userns.c, selfexec.c,
// stagestart.c, shhint.c, pty.c, diskwatch.c, diskaccount.c; tun.c and
// rtnl.c on the network's first use) and the init stage (init.c, pid1.c,
// exec.c, fds.c, netns.c, tun.c, tap.c, rtnl.c, ptyinside.c).

// #cgo CFLAGS: -I${SRCDIR}/.. -O2 -Wall -Wextra -Wno-unused-parameter -std=gnu11
import "C"

// The constructor in entry.c calls plancache's C side.
import _ "github.com/jail-sandbox/jail/plancache"
