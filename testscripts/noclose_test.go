package testscripts

import (
	"fmt"
	"os"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// noCloseRangeEnv makes the test binary a launcher that runs its arguments
// with close_range(2) failing (ENOSYS), as under an outer seccomp policy that
// predates it: jail must still let no inherited fd through.
const noCloseRangeEnv = "JAIL_TEST_NO_CLOSE_RANGE"

func execWithoutCloseRange(argv []string) {
	runtime.LockOSThread()
	const (
		archX8664 = 0xc000003e
		retAllow  = 0x7fff0000
		retErrno  = 0x00050000
	)
	prog := []unix.SockFilter{
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 4},                        // arch
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: archX8664, Jt: 0, Jf: 3}, // other arch: allow
		{Code: unix.BPF_LD | unix.BPF_W | unix.BPF_ABS, K: 0},                        // syscall number
		{Code: unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, K: unix.SYS_CLOSE_RANGE, Jt: 0, Jf: 1},
		{Code: unix.BPF_RET | unix.BPF_K, K: retErrno | uint32(unix.ENOSYS)},
		{Code: unix.BPF_RET | unix.BPF_K, K: retAllow},
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		fail(err)
	}
	if _, _, errno := unix.Syscall(unix.SYS_SECCOMP, 1 /* SET_MODE_FILTER */, 1 /* TSYNC */, uintptr(unsafe.Pointer(&fprog))); errno != 0 {
		fail(errno)
	}
	os.Unsetenv(noCloseRangeEnv)
	fail(syscall.Exec(argv[0], argv, os.Environ()))
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "no-close-range launcher:", err)
	os.Exit(2)
}
