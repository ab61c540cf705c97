// Throughput: 100 MiB through the stack against the same over the host's
// loopback (docs/design/netstack.md §2 wants at least half).

package netstack

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"testing"
	"time"
)

const throughputBytes = 100 << 20

// TestThroughput moves 100 MiB each way, three times, through the stack
// and directly, and compares the best runs; then it repeats the design's
// measurement with curl. It reports the figures, failing only on a
// collapse; it takes seconds of both CPUs, so it runs only when asked.
func TestThroughput(t *testing.T) {
	if testing.Short() || os.Getenv("JAIL_NETSTACK_THROUGHPUT") != "1" {
		t.Skip("moves 1.8 GB: set JAIL_NETSTACK_THROUGHPUT=1 (and no -short) to run it")
	}
	zeros := make([]byte, 1<<20)
	source := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		writeZeros(c, zeros)
	})
	sink := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, make([]byte, 1<<20))
		c.Write([]byte{1}) // all read
	})
	web := serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		http.ReadRequest(bufio.NewReader(c))
		fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n", throughputBytes)
		writeZeros(c, zeros)
	})
	j := newJailNet(t, 65520)
	h := newTestHandler(func(dst netip.AddrPort) (string, error) {
		switch dst.Port() {
		case 81:
			return sink, nil
		case 82:
			return web, nil
		}
		return source, nil
	})
	s := j.start(t, DefaultOptions(), h)
	defer func() {
		tcp := s.ns.Stats().TCP
		t.Logf("the stack sent %d TCP segments, retransmitted %d", tcp.SegmentsSent.Value(), tcp.Retransmits.Value())
	}()

	hostDial := func(addr string) (net.Conn, error) { return net.Dial("tcp", addr) }
	jailDial := func(addr string) (net.Conn, error) { return j.dial("tcp", addr, 5*time.Second) }
	for _, way := range []struct {
		name       string
		run        func(t *testing.T, dial func(string) (net.Conn, error), addr string) time.Duration
		host, jail string
	}{
		{"download", download, source, "198.18.0.1:80"},
		{"upload", upload, sink, "198.18.0.1:81"},
	} {
		direct := best(func() time.Duration { return way.run(t, hostDial, way.host) })
		through := best(func() time.Duration { return way.run(t, jailDial, way.jail) })
		ratio := direct.Seconds() / through.Seconds()
		t.Logf("%s 100 MiB, Go to Go, 1 MiB writes: host loopback %.2f GB/s, through the stack %.2f GB/s: %.2fx",
			way.name, rate(direct), rate(through), ratio)
		checkRatio(t, way.name, ratio)
	}

	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("no curl for the design's measurement")
	}
	curl := []string{"-sf", "-o", "/dev/null"}
	direct := best(func() time.Duration {
		return fetch(t, exec.Command("curl", append(curl, "http://"+web+"/")...))
	})
	through := best(func() time.Duration {
		return fetch(t, j.command("curl", append(curl, "http://198.18.0.1:82/")...))
	})
	ratio := direct.Seconds() / through.Seconds()
	t.Logf("curl 100 MiB over HTTP: host loopback %.2f GB/s, through the stack %.2f GB/s: %.2fx",
		rate(direct), rate(through), ratio)
	checkRatio(t, "curl", ratio)
}

// checkRatio fails only far below the 0.5x the design asks for: the
// ratio swings with the machine's load (host loopback alone varied from
// 2.2 to 6 GB/s on the 2-CPU development VM), while MTU 1500 instead of
// 65520 drops it to about 0.1x.
func checkRatio(t *testing.T, what string, ratio float64) {
	t.Helper()
	if ratio < 0.15 {
		t.Errorf("%s through the stack at %.2fx host loopback; want 0.5x, and never under 0.15x", what, ratio)
	}
}

func writeZeros(c net.Conn, zeros []byte) {
	for sent := 0; sent < throughputBytes; sent += len(zeros) {
		if _, err := c.Write(zeros); err != nil {
			return
		}
	}
}

// best is the shortest of three runs.
func best(run func() time.Duration) time.Duration {
	var min time.Duration
	for range 3 {
		if d := run(); min == 0 || d < min {
			min = d
		}
	}
	return min
}

func rate(d time.Duration) float64 { return throughputBytes / d.Seconds() / 1e9 }

// download reads the source's 100 MiB.
func download(t *testing.T, dial func(string) (net.Conn, error), addr string) time.Duration {
	start := time.Now()
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	n, err := io.CopyBuffer(io.Discard, struct{ io.Reader }{c}, make([]byte, 1<<20))
	if err != nil || n != throughputBytes {
		t.Fatalf("downloaded %d bytes, %v; want %d", n, err, throughputBytes)
	}
	return time.Since(start)
}

// upload writes 100 MiB to the sink and waits for it to have read them.
func upload(t *testing.T, dial func(string) (net.Conn, error), addr string) time.Duration {
	start := time.Now()
	c, err := dial(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	writeZeros(c, make([]byte, 1<<20))
	c.(*net.TCPConn).CloseWrite()
	if _, err := io.ReadFull(c, make([]byte, 1)); err != nil {
		t.Fatalf("the sink's acknowledgement: %v", err)
	}
	return time.Since(start)
}

// fetch times one command, process start included.
func fetch(t *testing.T, cmd *exec.Cmd) time.Duration {
	start := time.Now()
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %v: %s", cmd.Args, err, out)
	}
	return time.Since(start)
}
