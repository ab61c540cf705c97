package testscripts

import (
	"bytes"
	"fmt"
	"os"
	"slices"
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
//	ptyrun [-code N] [-as USER] [-size ROWSxCOLS] WAIT KEYS [WAIT KEYS...] -- PROG ARGS...
//
// PROG runs (as USER, who owns the terminal then, as after a login) as the session leader of a new pty, its controlling terminal,
// in the terminal's foreground, as a shell would run a job: what the
// terminal sends on ^C (SIGINT to the foreground process group) is what a
// person at the keyboard sends. The window is ROWSxCOLS (default 24x80).
// Then, step by step: once the output since the previous step's WAIT holds
// WAIT (Go-quoted, as the terminal shows it: "\r\n" ends a line; "" waits
// for nothing), KEYS is done: typed (Go-quoted: "\x03" is ^C), or "@resize=ROWSxCOLS" sets the window from the master's side (the
// kernel sends PROG's foreground process group SIGWINCH), or "@raw"
// checks that the terminal is in raw mode now (no ICANON, ECHO or ISIG:
// jail relaying a pty of its own), or "@holders" that no process on the
// host but PROG itself has the terminal open now (a jail's have only a
// pty of their own), or "@held" that some other process has, or
// "@signal=N" sends PROG signal N, or "@hangup" closes the master (the
// terminal window goes away; nothing is read or typed after it). Then
// PROG must end within 30 s with status N (default 0), and leave the
// terminal's modes exactly as they were before it started (unless hung
// up). Its output becomes the script's stdout.
func ptyRun(ts *testscript.TestScript, neg bool, args []string) {
	want, size, as := 0, "24x80", ""
	for len(args) > 2 && (args[0] == "-code" || args[0] == "-size" || args[0] == "-as") {
		switch args[0] {
		case "-code":
			n, err := strconv.Atoi(args[1])
			ts.Check(err)
			want = n
		case "-size":
			size = args[1]
		default:
			as = args[1]
		}
		args = args[2:]
	}
	sep := slices.Index(args, "--")
	if neg || sep < 2 || sep%2 != 0 || sep == len(args)-1 {
		ts.Fatalf("usage: ptyrun [-code N] [-as USER] [-size ROWSxCOLS] WAIT KEYS [WAIT KEYS...] -- PROG ARGS...")
	}
	master, slave, err := openPty()
	ts.Check(err)
	defer master.Close()
	ts.Check(setWinsize(master, size))
	before, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
	ts.Check(err)
	cmd := (&background{}).command(ts, runOpts{as: as}, args[sep+1:])
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	if cred := cmd.SysProcAttr.Credential; cred != nil {
		ts.Check(slave.Chown(int(cred.Uid), int(cred.Gid)))
	}
	cmd.SysProcAttr.Setpgid = false
	cmd.SysProcAttr.Setsid, cmd.SysProcAttr.Setctty, cmd.SysProcAttr.Ctty = true, true, 0
	var term unix.Stat_t
	ts.Check(unix.Fstat(int(slave.Fd()), &term))
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
	seen, hungUp := 0, false // what the steps' WAITs matched so far; the master closed
	for i := 0; i < sep; i += 2 {
		wait, err := strconv.Unquote(`"` + args[i] + `"`)
		ts.Check(err)
		keys := args[i+1]
		deadline := time.Now().Add(10 * time.Second)
		for {
			o := output()
			if at := strings.Index(o[seen:], wait); at >= 0 {
				seen += at + len(wait)
				break
			}
			if time.Now().After(deadline) {
				ts.Fatalf("after 10s the output does not hold %q past what earlier steps waited for:\n%s", wait, o)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if keys == "@hangup" {
			hungUp = true
			master.Close()
			continue
		}
		ptyStep(ts, master, cmd.Process, keys, output)
		if keys == "@holders" || keys == "@held" {
			if others := ptyHolders(ts, term, cmd.Process.Pid); (len(others) > 0) != (keys == "@held") {
				ts.Fatalf("%s: processes but PROG holding the terminal: %q\n%s", keys, others, output())
			}
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		ts.Fatalf("still running 30 s after the keys:\n%s", output())
	}
	time.Sleep(50 * time.Millisecond) // the last output, from the master
	if !hungUp {
		after, terr := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
		ts.Check(terr)
		if *after != *before {
			ts.Fatalf("the terminal's modes changed: before %+v, after %+v\n%s", *before, *after, output())
		}
	}
	finish(ts, want, err, bytes.NewBufferString(strings.ReplaceAll(output(), "\r\n", "\n")), &bytes.Buffer{})
}

// ptyStep does one step's KEYS on the terminal's master (ptyRun says
// what they may be).
func ptyStep(ts *testscript.TestScript, master *os.File, prog *os.Process, keys string, output func() string) {
	switch {
	case strings.HasPrefix(keys, "@signal="):
		n, err := strconv.Atoi(strings.TrimPrefix(keys, "@signal="))
		ts.Check(err)
		ts.Check(prog.Signal(syscall.Signal(n)))
	case strings.HasPrefix(keys, "@resize="):
		ts.Check(setWinsize(master, strings.TrimPrefix(keys, "@resize=")))
	case keys == "@raw":
		t, err := unix.IoctlGetTermios(int(master.Fd()), unix.TCGETS)
		ts.Check(err)
		if t.Lflag&(unix.ICANON|unix.ECHO|unix.ISIG) != 0 {
			ts.Fatalf("the terminal is not in raw mode (lflag %#x):\n%s", t.Lflag, output())
		}
	case keys == "@holders" || keys == "@held": // ptyHolders
	default:
		typed, err := strconv.Unquote(`"` + keys + `"`)
		ts.Check(err)
		_, err = master.Write([]byte(typed))
		ts.Check(err)
	}
}

// ptyHolders is every process but pid that has the terminal term open, as
// "PID CMDLINE": every fd of every process, followed to its file, is
// compared with it.
func ptyHolders(ts *testscript.TestScript, term unix.Stat_t, pid int) []string {
	var holders []string
	procs, err := os.ReadDir("/proc")
	ts.Check(err)
	for _, p := range procs {
		n, err := strconv.Atoi(p.Name())
		if err != nil || n == pid {
			continue
		}
		fds, _ := os.ReadDir("/proc/" + p.Name() + "/fd")
		for _, fd := range fds {
			var st unix.Stat_t
			if unix.Stat("/proc/"+p.Name()+"/fd/"+fd.Name(), &st) == nil && st.Dev == term.Dev && st.Rdev == term.Rdev && st.Ino == term.Ino {
				cmdline, _ := os.ReadFile("/proc/" + p.Name() + "/cmdline")
				holders = append(holders, fmt.Sprintf("%d %s", n, strings.ReplaceAll(string(cmdline), "\x00", " ")))
				break
			}
		}
	}
	return holders
}

// setWinsize sets the terminal's window to size, ROWSxCOLS.
func setWinsize(master *os.File, size string) error {
	r, c, ok := strings.Cut(size, "x")
	rows, err1 := strconv.ParseUint(r, 10, 16)
	cols, err2 := strconv.ParseUint(c, 10, 16)
	if !ok || err1 != nil || err2 != nil {
		return fmt.Errorf("window size %q: want ROWSxCOLS", size)
	}
	return unix.IoctlSetWinsize(int(master.Fd()), unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
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
