package testscripts

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Root without CAP_SYS_ADMIN binds a writable workspace with no idmap, so
// it must be the jail's own ids' (65534), which the plan checks. Another
// user's directory, open to all, swapped in under the name between the
// plan and PID 1's open must not be what the jail writes: PID 1 checks what
// it opened again (mount/root.c, MBIND_OWN). The swap is raced for real,
// many times: without the second check the jail writes the other user's
// directory in about a third of the runs. (Root's own path, which idmaps
// the workspace from its owner, is checked again too, mount/trees.c; there
// the kernel already refuses the jail a write as an id the idmap does not
// map, so no test could tell.)
func TestNoAdminWorkspaceSwap(t *testing.T) {
	if os.Geteuid() != 0 || s.unpriv == nil {
		t.Skip("needs root and the test user")
	}
	if _, err := exec.LookPath("setpriv"); err != nil {
		t.Skip("needs setpriv")
	}
	tester, _ := strconv.Atoi(s.unpriv.Uid)
	workspaceSwap(t, []string{"setpriv", "--inh-caps=-sys_admin", "--bounding-set=-sys_admin"}, 65534, tester)
}

// workspaceSwap races, for jail run under prefix, the swap of a workspace
// owned by own for a directory of otherUID's, open to all, and fails if the
// jail ever wrote into one as other than its owner.
func workspaceSwap(t *testing.T, prefix []string, own, otherUID int) {
	// Reachable by 65534, who opens the workspace.
	dir, err := os.MkdirTemp("", "jail-noadmin-swap-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	ws, other := filepath.Join(dir, "ws"), filepath.Join(dir, "other")
	for _, d := range []struct {
		path     string
		uid, gid int
		mode     os.FileMode
	}{{ws, own, own, 0o755}, {other, otherUID, otherUID, 0o777}} {
		if err := os.Mkdir(d.path, d.mode); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d.path, d.mode)
		if err := os.Chown(d.path, d.uid, d.gid); err != nil {
			t.Fatal(err)
		}
	}
	var stop atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !stop.Load() {
			unix.Renameat2(unix.AT_FDCWD, ws, unix.AT_FDCWD, other, unix.RENAME_EXCHANGE)
		}
	}()
	ran := 0
	for i := 0; i < 60; i++ {
		argv := append(append([]string{}, prefix...), filepath.Join(s.binDir, "jail"), "-p", "agent", "--workspace", ws,
			"--", "touch", fmt.Sprintf("/workspace/made-%d", i))
		c := exec.Command(argv[0], argv[1:]...)
		c.Env = []string{"PATH=/usr/bin:/bin", "HOME=" + dir}
		// Refused at plan time, refused by PID 1, or run in the jail's own.
		if out, err := c.CombinedOutput(); err == nil {
			ran++
		} else if !strings.Contains(string(out), "owned by uid") && !strings.Contains(string(out), "no longer") &&
			!strings.Contains(string(out), "does not exist") {
			t.Errorf("run %d: %v: %s", i, err, out)
		}
	}
	stop.Store(true)
	<-done
	if ran == 0 {
		t.Error("no run went ahead: the race was never run to the mount")
	}
	// What the jail made is its directory's owner's: a file of another
	// owner's in a directory is one written through the wrong idmap, or
	// none, into a directory swapped in after the plan.
	for _, d := range []string{ws, other} {
		var dst syscall.Stat_t
		if err := syscall.Stat(d, &dst); err != nil {
			t.Fatal(err)
		}
		entries, _ := os.ReadDir(d)
		var wrong []string
		for _, e := range entries {
			var fst syscall.Stat_t
			if strings.HasPrefix(e.Name(), "made-") && syscall.Lstat(filepath.Join(d, e.Name()), &fst) == nil && fst.Uid != dst.Uid {
				wrong = append(wrong, fmt.Sprintf("%s (uid %d)", e.Name(), fst.Uid))
			}
		}
		if len(wrong) > 0 {
			t.Errorf("the jail wrote uid %d's directory as another uid, after a swap: %v", dst.Uid, wrong)
		}
	}
}
