package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
)

// ptyRun implements
//
//	ptyrun [-code N] WAIT KEYS -- PROG ARGS...
//
// PROG runs as the session leader of a new pty, its controlling terminal,
// in the terminal's foreground, as a shell would run a job: what the
// terminal sends on ^C (SIGINT to the foreground process group) is what a
// person at the keyboard sends. Once its output holds WAIT, KEYS is typed
// (Go-quoted: "\x03" is ^C); then PROG must end within 30 s with status N
// (default 0). Its output becomes the script's stdout.
func ptyRun(ts *testscript.TestScript, neg bool, args []string) {
	want := 0
	if len(args) > 2 && args[0] == "-code" {
		n, err := strconv.Atoi(args[1])
		ts.Check(err)
		want, args = n, args[2:]
	}
	if neg || len(args) < 4 || args[2] != "--" {
		ts.Fatalf("usage: ptyrun [-code N] WAIT KEYS -- PROG ARGS...")
	}
	wait := args[0]
	keys, err := strconv.Unquote(`"` + args[1] + `"`)
	ts.Check(err)
	master, slave, err := openPty()
	ts.Check(err)
	defer master.Close()
	cmd := (&background{}).command(ts, runOpts{}, args[3:])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	ts.Check(cmd.Start())
	slave.Close()
	ts.Defer(func() { killGroup(cmd) })

	var mu sync.Mutex
	var out bytes.Buffer
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := master.Read(buf)
			mu.Lock()
			out.Write(buf[:n])
			mu.Unlock()
			if err != nil {
				return
			}
		}
	}()
	output := func() string {
		mu.Lock()
		defer mu.Unlock()
		return out.String()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(output(), wait) {
		if time.Now().After(deadline) {
			ts.Fatalf("after 10s the output does not hold %q:\n%s", wait, output())
		}
		time.Sleep(10 * time.Millisecond)
	}
	_, err = master.Write([]byte(keys))
	ts.Check(err)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		ts.Fatalf("still running 30 s after the keys:\n%s", output())
	}
	time.Sleep(50 * time.Millisecond) // the last output, from the master
	finish(ts, want, err, bytes.NewBufferString(strings.ReplaceAll(output(), "\r\n", "\n")), &bytes.Buffer{})
}

// openPty opens a new pseudo-terminal: the master, and its slave.
func openPty() (master, slave *os.File, err error) {
	fd, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("open /dev/ptmx: %w", err)
	}
	master = os.NewFile(uintptr(fd), "ptmx")
	if err := unix.IoctlSetPointerInt(fd, unix.TIOCSPTLCK, 0); err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCGPTN)
	if err != nil {
		master.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	slave, err = os.OpenFile("/dev/pts/"+strconv.Itoa(n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		master.Close()
		return nil, nil, err
	}
	return master, slave, nil
}
