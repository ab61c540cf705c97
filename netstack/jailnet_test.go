// Test fixture: a network namespace set up as a jail's is (a TUN named
// jail0, its addresses and default routes), with one OS thread living in
// it to make the jail's sockets.

package netstack

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// jailNet is a jail's network namespace, without the jail.
type jailNet struct {
	tun  int    // the TUN fd, the one PID 1 would hand over
	ns   string // the namespace's path in /proc, for nsenter
	work chan func()
}

// newJailNet makes the namespace and its TUN, configured as
// docs/design/netstack.md §1 says PID 1 does; it skips the test when that
// needs what this host or user lacks.
func newJailNet(t *testing.T, mtu int) *jailNet {
	t.Helper()
	return newJailNetFlags(t, mtu, unix.IFF_TUN|unix.IFF_NO_PI|unix.IFF_VNET_HDR)
}

// newJailNetFlags is newJailNet with the device made with flags, as
// jail/tun.c's TUNSETIFF might be.
func newJailNetFlags(t *testing.T, mtu int, flags uint16) *jailNet {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: makes a network namespace and a TUN device")
	}
	if _, err := os.Stat("/dev/net/tun"); err != nil {
		t.Skipf("no TUN device: %v", err)
	}
	if _, err := exec.LookPath("ip"); err != nil {
		t.Skip("needs ip (iproute2) to configure the TUN")
	}
	j := &jailNet{tun: -1, work: make(chan func())}
	ready := make(chan error)
	go j.live(mtu, flags, ready)
	if err := <-ready; err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { close(j.work) })
	return j
}

// live runs on the namespace's thread until the test ends. The thread is
// never unlocked, so it dies with this goroutine and takes nothing of
// the namespace back to the Go scheduler.
func (j *jailNet) live(mtu int, flags uint16, ready chan<- error) {
	runtime.LockOSThread()
	if err := j.setUp(mtu, flags); err != nil {
		if j.tun >= 0 {
			unix.Close(j.tun)
		}
		ready <- err
		return
	}
	ready <- nil
	for f := range j.work {
		f()
	}
}

func (j *jailNet) setUp(mtu int, flags uint16) error {
	if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
		return fmt.Errorf("unshare a network namespace: %w", err)
	}
	// Opened in the new namespace, so the device is made there.
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open /dev/net/tun: %w", err)
	}
	j.tun = fd
	ifr, err := unix.NewIfreq("jail0")
	if err != nil {
		return err
	}
	ifr.SetUint16(flags)
	if err := unix.IoctlIfreq(fd, unix.TUNSETIFF, ifr); err != nil {
		return fmt.Errorf("TUNSETIFF: %w", err)
	}
	j.ns = fmt.Sprintf("/proc/%d/task/%d/ns/net", os.Getpid(), unix.Gettid())
	for _, args := range [][]string{
		// No link-local address, so the kernel sends nothing by itself.
		{"link", "set", "jail0", "mtu", fmt.Sprint(mtu), "addrgenmode", "none"},
		{"link", "set", "jail0", "up"},
		{"addr", "add", "192.0.0.2/32", "dev", "jail0"},
		{"-6", "addr", "add", "fd6a:696c::2/128", "dev", "jail0", "nodad"},
		{"route", "add", "default", "dev", "jail0", "src", "192.0.0.2"},
		{"-6", "route", "add", "default", "dev", "jail0", "src", "fd6a:696c::2"},
	} {
		out, err := j.command("ip", args...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("ip %v: %v: %s", args, err, out)
		}
	}
	return nil
}

// command is a command to run in the namespace.
func (j *jailNet) command(name string, args ...string) *exec.Cmd {
	return exec.Command("nsenter", append([]string{"--net=" + j.ns, name}, args...)...)
}

// do runs f on the namespace's thread: sockets f makes are the jail's.
func (j *jailNet) do(f func()) {
	done := make(chan struct{})
	j.work <- func() { f(); close(done) }
	<-done
}

// dial connects from inside the jail.
func (j *jailNet) dial(network, addr string, timeout time.Duration) (c net.Conn, err error) {
	j.do(func() { c, err = net.DialTimeout(network, addr, timeout) })
	return c, err
}

// socket makes a raw socket inside the jail.
func (j *jailNet) socket(domain, typ, proto int) (fd int, err error) {
	j.do(func() { fd, err = unix.Socket(domain, typ|unix.SOCK_CLOEXEC, proto) })
	return fd, err
}

// start serves the TUN with a stack; the test's end closes it.
func (j *jailNet) start(t *testing.T, opts Options, h Handler) *Stack {
	t.Helper()
	s, err := Start(j.tun, opts, h)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
