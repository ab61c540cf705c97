package jail

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/jail-sandbox/jail/plancache"
)

// TestHandoffBoundary: the hand-over Go writes (Plan.memfd), the runner
// reads back whole, with the plan and the cache's deps as they were; and it
// refuses one that is not exactly that (a byte more, not sealed, not a
// memfd).
func TestHandoffBoundary(t *testing.T) {
	plan := &Plan{Data: seedPlans(t)[1]}
	fi, err := os.Lstat("/")
	if err != nil {
		t.Fatal(err)
	}
	deps := plancache.Deps{"/": fi, "/no/such/file": nil}
	var want []byte
	for _, cache := range []plancache.Deps{nil, deps} {
		fd, err := plan.memfd("fd:3", time.Now(), cache)
		if err != nil {
			t.Fatal(err)
		}
		// It holds the plan's environment (secrets too): no child of a
		// library caller may inherit it (Exec clears the flag for its
		// own exec only).
		if fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0); err != nil || fl&unix.FD_CLOEXEC == 0 {
			t.Errorf("the hand-over memfd is not close-on-exec (flags %#x, %v)", fl, err)
		}
		if cache != nil {
			want = readAll(t, fd)
		}
		planLen, depsLen, err := handoffRead(fd)
		if err != nil {
			t.Fatalf("deps %v: refused: %v", cache != nil, err)
		}
		if planLen != len(plan.Data) || (cache == nil) != (depsLen == 0) {
			t.Errorf("deps %v: plan %d bytes, deps %d bytes; want plan %d bytes", cache != nil, planLen, depsLen, len(plan.Data))
		}
	}

	for _, c := range []struct {
		name  string
		data  []byte
		seals int
	}{
		{"a byte more", append(append([]byte(nil), want...), 0), unix.F_SEAL_WRITE | unix.F_SEAL_SEAL},
		{"a byte less", want[:len(want)-1], unix.F_SEAL_WRITE | unix.F_SEAL_SEAL},
		{"not sealed", want, 0},
	} {
		fd := memfd(t, c.data, c.seals)
		if _, _, err := handoffRead(fd); err == nil {
			t.Errorf("%s: taken", c.name)
		}
	}
	// Not a memfd at all: F_GET_SEALS fails (-1: every bit set).
	f, err := os.CreateTemp(t.TempDir(), "handoff")
	if err != nil {
		t.Fatal(err)
	}
	f.Write(want)
	fd, err := unix.Dup(int(f.Fd()))
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := handoffRead(fd); err == nil {
		t.Error("a regular file: taken")
	}
}

func readAll(t *testing.T, fd int) []byte {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, st.Size)
	if _, err := unix.Pread(fd, b, 0); err != nil {
		t.Fatal(err)
	}
	return b
}

func memfd(t *testing.T, data []byte, seals int) int {
	fd, err := unix.MemfdCreate("handoff-test", unix.MFD_ALLOW_SEALING|unix.MFD_CLOEXEC)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := unix.Pwrite(fd, data, 0); err != nil {
		t.Fatal(err)
	}
	if seals != 0 {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_ADD_SEALS, seals); err != nil {
			t.Fatal(err)
		}
	}
	return fd
}
