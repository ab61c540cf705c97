package testscripts

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestProxyLifeline starts the allowlist proxy as the runner does, but
// from here, so its parent lives on: the proxy must end when its lifeline
// (the pipe whose write end only the runner holds) reaches EOF, also when
// that happened before it started. That is the runner killed between
// forking the proxy and the proxy's parent-death signal, where no signal
// ever comes; the proxy would serve, outside every namespace of the jail,
// as long as the machine runs.
func TestProxyLifeline(t *testing.T) {
	for _, c := range []struct {
		name       string
		closeFirst bool
	}{{"runner gone before the proxy starts", true}, {"runner gone while it serves", false}} {
		t.Run(c.name, func(t *testing.T) {
			proxy, lifeline := startProxy(t)
			done := make(chan error, 1)
			go func() { done <- proxy.Wait() }()
			if c.closeFirst {
				lifeline.Close()
			} else {
				// Alive while its runner is: the end below is the
				// lifeline's doing, not a failed start.
				select {
				case err := <-done:
					t.Fatalf("the proxy ended with its runner alive: %v", err)
				case <-time.After(1500 * time.Millisecond):
				}
				lifeline.Close()
			}
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				proxy.Process.Kill()
				t.Fatal("the proxy still runs 5 s after its runner's end")
			}
		})
	}
}

// startProxy starts jail's proxy stage with the fds the runner gives it,
// and returns it with the write end of its lifeline.
func startProxy(t *testing.T) (*exec.Cmd, *os.File) {
	// The resolver's socket and listener, as in network = "none".
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	udp, err := pc.(*net.UDPConn).File()
	if err != nil {
		t.Fatal(err)
	}
	pc.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tcp, err := ln.(*net.TCPListener).File()
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	reportR, reportW, _ := os.Pipe()
	configR, configW, _ := os.Pipe()
	lifeR, lifeW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	configW.WriteString(`{"mode":"none","allow":[],"hosts":{},"uid":65534,"gid":65534}`)
	configW.Close()
	cmd := exec.Command(filepath.Join(s.binDir, "jail"))
	cmd.Args[0] = "jail-proxy"
	cmd.Env = []string{"_JAIL_STAGE=proxy"}
	cmd.ExtraFiles = []*os.File{reportW, configR, lifeR, udp, tcp} // fds 3-7 (jail/proxyctl.c)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for _, f := range append(cmd.ExtraFiles, reportR) {
		f.Close()
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	return cmd, lifeW
}
