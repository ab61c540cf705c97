// Main as the runner starts it: the fd layout, the resolver in mode
// "none", the report at SIGTERM and at the runner's stop byte.

package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// TestMain runs Main in a re-executed test binary when asked: the fds are
// the process's own.
func TestMain(m *testing.M) {
	if os.Getenv("_PROXY_TEST_MAIN") == "1" {
		Main(nil)
	}
	os.Exit(m.Run())
}

// mainRun is a helper started as the runner starts it, in mode "none":
// 3 report, 4 config, 5 lifeline, 6 and 7 the resolver's sockets (pc and
// ln here).
type mainRun struct {
	cmd    *exec.Cmd
	report *os.File // its read end
	life   *os.File // the lifeline's write end
	pc     net.PacketConn
	ln     net.Listener
}

// startMain starts the helper; stopFirst writes the stop byte on its
// lifeline before it starts.
func startMain(t *testing.T, stopFirst bool) *mainRun {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	udpFile, _ := pc.(*net.UDPConn).File()
	tcpFile, _ := ln.(*net.TCPListener).File()
	reportR, reportW, _ := os.Pipe()
	configR, configW, _ := os.Pipe()
	lifeR, lifeW, _ := os.Pipe()
	t.Cleanup(func() { lifeW.Close() })
	// The ids it becomes when the tests run as root.
	configW.WriteString(`{"mode":"none","profile":"agent","hosts":{},"uid":65534,"gid":65534}`)
	configW.Close()
	if stopFirst {
		lifeW.Write([]byte{stopByte})
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "_PROXY_TEST_MAIN=1")
	cmd.ExtraFiles = []*os.File{reportW, configR, lifeR, udpFile, tcpFile}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	reportW.Close()
	configR.Close()
	lifeR.Close()
	return &mainRun{cmd, reportR, lifeW, pc, ln}
}

// TestMainNone: the helper answers a lookup NXDOMAIN, says the refusal,
// and reports it at SIGTERM; it holds at most maxFiles descriptors.
func TestMainNone(t *testing.T) {
	m := startMain(t, false)
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(m.report)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()

	for _, at := range [][2]string{{"udp", m.pc.LocalAddr().String()}, {"tcp", m.ln.Addr().String()}} {
		if a := ask(t, at[0], at[1], "example.com.", dnsmessage.TypeA); a.h.RCode != dnsmessage.RCodeNameError {
			t.Errorf("%s: %v, want NXDOMAIN", at[0], a.h.RCode)
		}
	}
	want := "refused network is off in this jail; refused lookup of example.com (allow it with --allow example.com)"
	if l := next(t, lines); l != want {
		t.Errorf("line %q, want %q", l, want)
	}
	// Its own limit on descriptors, soft and hard.
	limits, err := os.ReadFile(fmt.Sprintf("/proc/%d/limits", m.cmd.Process.Pid))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^Max open files +4096 +4096 `).Match(limits) {
		t.Errorf("the helper's limits:\n%s", limits)
	}
	m.cmd.Process.Signal(syscall.SIGTERM)
	var last string
	for l := range lines {
		last = l
	}
	if want := `"network_denied":[{"host":"example.com","port":0,"count":2,"reason":"network is off in this jail","kind":"lookup"}],"network_allowed":[]`; last != want {
		t.Errorf("last report %q, want %q", last, want)
	}
	if err := m.cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v", err)
	}
}

// TestMainStopAtOnce: the runner's stop byte, on the lifeline before the
// helper's runtime has even started (a run that ended a moment after its
// first packet), still gets the last report, and exit 0: a signal then
// would have ended it with none.
func TestMainStopAtOnce(t *testing.T) {
	m := startMain(t, true)
	b, _ := io.ReadAll(m.report)
	if want := `"network_denied":[],"network_allowed":[]`; strings.TrimSpace(string(b)) != want {
		t.Errorf("said %q, want the last report %q", b, want)
	}
	if err := m.cmd.Wait(); err != nil {
		t.Errorf("after the stop byte: %v", err)
	}
}

// TestMainBadMode: a mode the helper does not serve is said on the report
// pipe, and it ends with 125.
func TestMainBadMode(t *testing.T) {
	got, err := mainRefuses(t, []byte(`{"mode":"host"}`))
	if got != `jail: network helper: configuration: mode "host"` {
		t.Errorf("said %q", got)
	}
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 125 {
		t.Errorf("exit: %v, want 125", err)
	}
}

// mainRefuses starts the helper (Main, in this test binary) with config
// and no sockets, and returns what it said on the report pipe and how it
// ended: for a configuration it must refuse before serving.
func mainRefuses(t *testing.T, config []byte) (string, error) {
	t.Helper()
	reportR, reportW, _ := os.Pipe()
	configR, configW, _ := os.Pipe()
	lifeR, lifeW, _ := os.Pipe()
	defer lifeW.Close()
	configW.Write(config)
	configW.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "_PROXY_TEST_MAIN=1")
	cmd.ExtraFiles = []*os.File{reportW, configR, lifeR}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	reportW.Close()
	b, _ := io.ReadAll(reportR)
	return strings.TrimSpace(string(b)), cmd.Wait()
}

func next(t *testing.T, lines chan string) string {
	t.Helper()
	select {
	case l := <-lines:
		return l
	case <-time.After(10 * time.Second):
		t.Fatal("no line from the helper")
		return ""
	}
}
