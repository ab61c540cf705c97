// How a relayed connection ends: each side's end reaches the other as it
// came, a clean end as a half-close and a reset as a reset.

package proxy

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// errAfter is a source that fails, not ends, once its data is read.
type errAfter struct {
	r   io.Reader
	err error
}

func (e *errAfter) Read(b []byte) (int, error) {
	n, err := e.r.Read(b)
	if err == io.EOF {
		return n, e.err
	}
	return n, err
}

// relayCopy says what stopped it, so relay can pass it on: nothing at a
// clean end, the source's error, or the destination's, whether the copy
// was small (a short source) or flowing (a long one).
func TestRelayCopySaysHowItEnded(t *testing.T) {
	reset := errors.New("reset")
	for _, size := range []int{100, 4 << 20} {
		ps := newPieceStore(flowBudget)
		var got bytes.Buffer
		readErr, writeErr := relayCopy(&got, bytes.NewReader(make([]byte, size)), func(int) {}, ps)
		if readErr != nil || writeErr != nil || got.Len() != size {
			t.Errorf("%d bytes then EOF: copied %d, returned %v, %v; want all, nil, nil", size, got.Len(), readErr, writeErr)
		}
		got.Reset()
		readErr, writeErr = relayCopy(&got, &errAfter{bytes.NewReader(make([]byte, size)), reset}, func(int) {}, ps)
		if readErr != reset || writeErr != nil || got.Len() != size {
			t.Errorf("%d bytes then a reset: copied %d, returned %v, %v; want all, the reset, nil", size, got.Len(), readErr, writeErr)
		}
		readErr, writeErr = relayCopy(failWriter{}, bytes.NewReader(make([]byte, size)), func(int) {}, ps)
		if readErr != nil || writeErr == nil {
			t.Errorf("%d bytes to a failing destination: returned %v, %v; want nil, its error", size, readErr, writeErr)
		}
		tokensBack(t, ps, "after the copies")
	}
}

// relayed starts relaying between two TCP pairs and returns the jail's end,
// the server's far end, and a channel closed once the relay returned
// (for ended).
func relayed(t *testing.T, p *proxy) (jailSide, farSide net.Conn, done chan struct{}) {
	jailSide, client := pair(t)
	server, farSide := pair(t)
	done = make(chan struct{})
	go func() {
		p.relay(target{"api.test", 22}, client, server, nil)
		close(done)
	}()
	return jailSide, farSide, done
}

// A server that ends its side first (a half-close) still gets all the
// jail sends after it: the jail's side is not cut when the server's data
// ends.
func TestRelayHalfClose(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, farSide, done := relayed(t, p)
	up := randomBytes(7, 3<<20)
	gotUp := make(chan []byte, 1)
	go func() {
		farSide.Write([]byte("greeting\n"))
		closeWrite(farSide)
		b, _ := io.ReadAll(farSide)
		gotUp <- b
		farSide.Close()
	}()
	greeting, err := io.ReadAll(jailSide)
	if err != nil || string(greeting) != "greeting\n" {
		t.Fatalf("the jail read %q, %v before the server's end; want the greeting, then EOF", greeting, err)
	}
	if _, err := jailSide.Write(up); err != nil {
		t.Fatalf("the jail's upload after the server's half-close: %v", err)
	}
	closeWrite(jailSide)
	if b := <-gotUp; !bytes.Equal(b, up) {
		t.Errorf("the server got %d bytes of the %d the jail sent after the server's half-close", len(b), len(up))
	}
	ended(t, done)
}

// isReset says whether err is a connection reset.
func isReset(err error) bool { return errors.Is(err, syscall.ECONNRESET) }

// resetAfter has the server send data and then reset, and checks that
// the jail reads the data whole, then the reset: the data is read before
// the reset goes, so none of it is lost on the way, and what is asserted
// is how the read ends.
func resetAfter(t *testing.T, jailSide, farSide net.Conn, data []byte) {
	t.Helper()
	if _, err := farSide.Write(data); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(data))
	if _, err := io.ReadFull(jailSide, got); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("the jail read %v before the reset; want the data whole", err)
	}
	abort(farSide)
	jailSide.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := jailSide.Read(make([]byte, 1))
	if !isReset(err) {
		t.Errorf("after the server's reset the jail's read returned %d, %v; want a connection reset", n, err)
	}
}

// A server's reset reaches the jail as a reset, after the data that came
// before it: a download cut short must not end like a whole one.
func TestRelayPassesTheServersReset(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, farSide, done := relayed(t, p)
	resetAfter(t, jailSide, farSide, randomBytes(8, 1<<20))
	ended(t, done)
}

// The jail's reset reaches the server as a reset.
func TestRelayPassesTheJailsReset(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, farSide, done := relayed(t, p)
	if _, err := jailSide.Write([]byte("request")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len("request"))
	if _, err := io.ReadFull(farSide, got); err != nil {
		t.Fatal(err)
	}
	abort(jailSide)
	farSide.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, err := farSide.Read(make([]byte, 1))
	if !isReset(err) {
		t.Errorf("after the jail's reset the server's read returned %d, %v; want a connection reset", n, err)
	}
	ended(t, done)
}

// relayedHTTP starts relaying plain HTTP (port 80, Host checked) between
// two TCP pairs, as relayed does.
func relayedHTTP(t *testing.T, p *proxy) (jailSide, farSide net.Conn, done chan struct{}) {
	jailSide, client := pair(t)
	server, farSide := pair(t)
	done = make(chan struct{})
	go func() {
		p.serveConn(target{"api.test", 80}, client, server, bufio.NewReader(client))
		close(done)
	}()
	return jailSide, farSide, done
}

// A server's reset in the middle of an answer whose end is the
// connection's reaches the jail as a reset, and is no refusal: as EOF the cut answer would
// look whole.
func TestRelayHTTPPassesTheServersReset(t *testing.T) {
	p, rr := newTestProxy(t, Config{})
	jailSide, farSide, done := relayedHTTP(t, p)
	if _, err := jailSide.Write([]byte("GET / HTTP/1.1\r\nHost: api.test\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := http.ReadRequest(bufio.NewReader(farSide)); err != nil {
		t.Fatalf("the server read no request: %v", err)
	}
	resetAfter(t, jailSide, farSide, append([]byte("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n"), randomBytes(9, 256<<10)...))
	ended(t, done)
	// The jail's side, reset here, ends the requests' loop: no refusal.
	if l := rr.refused(t); len(l) > 0 {
		t.Errorf("the server's reset was said as a refusal: %q", l)
	}
}

// The jail's reset within a request's body reaches the server as a
// reset (a clean end would make a cut body look whole to a server that
// reads to the end), and is no refusal.
func TestRelayHTTPPassesTheJailsReset(t *testing.T) {
	p, rr := newTestProxy(t, Config{})
	jailSide, farSide, done := relayedHTTP(t, p)
	head := "POST /up HTTP/1.1\r\nHost: api.test\r\nTransfer-Encoding: chunked\r\n\r\n4\r\npart\r\n"
	if _, err := jailSide.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(farSide)
	req, err := http.ReadRequest(br)
	if err != nil {
		t.Fatalf("the server read no request: %v", err)
	}
	part := make([]byte, 4)
	if _, err := io.ReadFull(req.Body, part); err != nil {
		t.Fatalf("the server read no body: %v", err)
	}
	abort(jailSide)
	farSide.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = io.ReadAll(br)
	if !isReset(err) {
		t.Errorf("after the jail's reset the server's read returned %v; want a connection reset", err)
	}
	ended(t, done)
	if l := rr.refused(t); len(l) > 0 {
		t.Errorf("the jail's reset was said as a refusal: %q", l)
	}
}

// settle waits for the relays under way, and no longer than it is told
// (and settleCut).
func TestSettleWaitsForRelays(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	start := time.Now()
	p.settle(5 * time.Second)
	if d := time.Since(start); d > time.Second {
		t.Errorf("settle with nothing under way took %v", d)
	}
	end := p.relays.start(nil)
	go func() {
		time.Sleep(100 * time.Millisecond)
		end()
	}()
	start = time.Now()
	p.settle(5 * time.Second)
	if d := time.Since(start); d < 100*time.Millisecond || d > 4*time.Second {
		t.Errorf("settle with a relay going for 100 ms took %v", d)
	}
	p.relays.start(nil)
	start = time.Now()
	p.settle(200 * time.Millisecond)
	if d := time.Since(start); d < 200*time.Millisecond+settleCut || d > 4*time.Second {
		t.Errorf("settle(200ms) with a relay that never ends took %v", d)
	}
}

// A relay still writing to a server that takes nothing when settle's
// time is up is cut, and what it wrote is counted before settle returns:
// the last report has every byte the server can still get.
func TestSettleCountsWhatWasWritten(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, farSide, done := relayed(t, p)
	go func() {
		jailSide.Write(make([]byte, 32<<20))
		jailSide.Close()
	}()
	time.Sleep(300 * time.Millisecond) // the buffers on the way fill
	p.settle(100 * time.Millisecond)
	p.mu.Lock()
	counted := p.allowed[target{"api.test", 22}].Bytes
	p.mu.Unlock()
	got, _ := io.Copy(io.Discard, farSide)
	if counted != got {
		t.Errorf("when settle returned %d bytes were counted; the server then read %d", counted, got)
	}
	ended(t, done)
}

// A connection whose server ended its side, and whose jail side sends
// nothing after (a program that never closes what it read to the end),
// is closed after halfOpenIdle, giving its slot back.
func TestHalfOpenLeftIdleIsClosed(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	p.halfOpenIdle = 100 * time.Millisecond
	jailSide, farSide, done := relayed(t, p)
	farSide.Write([]byte("bye\n"))
	closeWrite(farSide)
	if b, err := io.ReadAll(jailSide); err != nil || string(b) != "bye\n" {
		t.Fatalf("the jail read %q, %v", b, err)
	}
	ended(t, done)
}

// One whose jail side goes on sending, a little at a time, stays open
// past halfOpenIdle until the jail ends its side.
func TestHalfOpenStillSendingStaysOpen(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	p.halfOpenIdle = 500 * time.Millisecond
	jailSide, farSide, done := relayed(t, p)
	closeWrite(farSide)
	if _, err := io.ReadAll(jailSide); err != nil {
		t.Fatal(err)
	}
	for range 40 {
		time.Sleep(50 * time.Millisecond)
		if _, err := jailSide.Write([]byte("x")); err != nil {
			t.Fatalf("the jail's write after %v: %v", p.halfOpenIdle, err)
		}
	}
	closeWrite(jailSide)
	farSide.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(farSide); err != nil || string(b) != strings.Repeat("x", 40) {
		t.Errorf("the server got %q, %v; want the 40 bytes the jail sent over two seconds", b, err)
	}
	ended(t, done)
}

// One whose jail side waits on a server slow to take its bytes is not
// left idle: a write under way is progress, though it has not returned.
func TestHalfOpenWaitingOnTheServerStaysOpen(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	p.halfOpenIdle = 300 * time.Millisecond
	up := randomBytes(10, 32<<20) // more than the buffers on the way hold
	jailSide, farSide, done := relayed(t, p)
	closeWrite(farSide)
	if _, err := io.ReadAll(jailSide); err != nil {
		t.Fatal(err)
	}
	go func() {
		jailSide.Write(up)
		closeWrite(jailSide)
	}()
	time.Sleep(time.Second) // over three idle times, the writes waiting
	farSide.SetReadDeadline(time.Now().Add(10 * time.Second))
	if b, err := io.ReadAll(farSide); err != nil || !bytes.Equal(b, up) {
		t.Errorf("the server, slow to read, got %d bytes of %d, %v", len(b), len(up), err)
	}
	ended(t, done)
}

// The HTTP proxy's forwarding counts a body the jail cut short, and the
// server sees it cut.
func TestHTTPProxyForwardCountsACutBody(t *testing.T) {
	got := make(chan error, 1)
	read := make(chan int64, 1)
	port := server(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			got <- err
			return
		}
		n, err := io.Copy(io.Discard, req.Body)
		read <- n
		got <- err
	})
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	jail, served := pair(t)
	done := make(chan struct{})
	go func() {
		p.serveHTTP(served)
		close(done)
	}()
	fmt.Fprintf(jail, "POST http://api.test:%d/up HTTP/1.1\r\nHost: api.test:%d\r\nTransfer-Encoding: chunked\r\n\r\n", port, port)
	chunk := fmt.Sprintf("%x\r\n%s\r\n", 1<<16, bytes.Repeat([]byte("b"), 1<<16))
	for range 16 {
		if _, err := io.WriteString(jail, chunk); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(100 * time.Millisecond)
	abort(jail)
	select {
	case err := <-got:
		if err == nil {
			t.Error("the server read the cut body as whole")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the server's read did not end")
	}
	n := <-read
	ended(t, done)
	p.mu.Lock()
	var counted int64
	for _, a := range p.allowed {
		counted += a.Bytes
	}
	p.mu.Unlock()
	if counted == 0 || counted < n {
		t.Errorf("counted %d bytes out; the server read %d of the body", counted, n)
	}
}

// The end of a run waits for a relay's jail side only: a server that
// keeps its side open after the jail's end holds nothing up.
func TestSettleDoesNotWaitForTheServer(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, farSide, _ := relayed(t, p)
	jailSide.Write([]byte("last words"))
	closeWrite(jailSide)
	farSide.SetReadDeadline(time.Now().Add(5 * time.Second))
	if b, err := io.ReadAll(farSide); err != nil || string(b) != "last words" {
		t.Fatalf("the server read %q, %v", b, err)
	}
	start := time.Now()
	p.settle(5 * time.Second)
	if d := time.Since(start); d > time.Second {
		t.Errorf("settle waited %v for a server that keeps its side open", d)
	}
}

// The HTTP proxy's forwarding passes on an answer the server gives before
// it has the body (a 413, then its close, while the body still comes),
// as a host's client would read it; and a request without a body goes
// without one, and one without a User-Agent without Go's.
func TestHTTPProxyForwardEarlyAnswer(t *testing.T) {
	heads := make(chan []string, 2) // the Transfer-Encoding each request came with
	agents := make(chan string, 2)
	port := server(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		heads <- req.TransferEncoding
		agents <- req.UserAgent()
		fmt.Fprintf(c, "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 9\r\nConnection: close\r\n\r\ntoo big!\n")
		c.Close() // the body unread: a reset
	})
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	for _, c := range []struct{ name, head string }{
		{"POST", fmt.Sprintf("POST /up HTTP/1.1\r\nContent-Length: %d\r\n", 64<<20)},
		{"GET", "GET /x HTTP/1.1\r\n"},
		{"empty POST", "POST /up HTTP/1.1\r\nContent-Length: 0\r\n"},
		{"POST without a length", "POST /up HTTP/1.1\r\n"},
	} {
		jail, served := pair(t)
		go p.serveHTTP(served)
		jail.SetDeadline(time.Now().Add(10 * time.Second))
		head := strings.Replace(c.head, " /", fmt.Sprintf(" http://api.test:%d/", port), 1)
		fmt.Fprintf(jail, "%sHost: api.test:%d\r\n\r\n", head, port)
		if c.name == "POST" {
			go jail.Write(make([]byte, 64<<20))
		}
		resp, err := http.ReadResponse(bufio.NewReader(jail), nil)
		if err != nil || resp.StatusCode != 413 {
			t.Errorf("%s: the jail read %v, %v; want the server's 413", c.name, resp, err)
		}
		if te := <-heads; c.name != "POST" && len(te) > 0 {
			t.Errorf("%s went with a body of unknown length: Transfer-Encoding %q", c.name, te)
		}
		if ua := <-agents; ua != "" {
			t.Errorf("%s, sent without a User-Agent, reached the server with %q", c.name, ua)
		}
	}
}

// The HTTP proxy's forwarding passes the end of an answer on as it comes,
// though the body is not all sent (a client waiting on Expect: 100-continue
// reads the refusal and its end), a server's reset as a reset, and counts
// the answer as it passes.
func TestHTTPProxyForwardPassesTheAnswersEnd(t *testing.T) {
	answer := append([]byte("HTTP/1.0 200 OK\r\n\r\n"), randomBytes(11, 1<<20)...)
	stall, reset := make(chan struct{}), make(chan struct{})
	port := server(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		switch req.URL.Path {
		case "/expect":
			fmt.Fprintf(c, "HTTP/1.1 403 Forbidden\r\nConnection: close\r\n\r\nnot you\n")
			c.(*net.TCPConn).CloseWrite()
			<-stall // the body never read
		case "/reset":
			c.Write(answer)
			<-reset
			abort(c)
		}
	})
	defer close(stall)
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})

	jail, served := pair(t)
	go p.serveHTTP(served)
	jail.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(jail, "PUT http://api.test:%d/expect HTTP/1.1\r\nHost: api.test:%d\r\nContent-Length: 100\r\nExpect: 100-continue\r\n\r\n", port, port)
	if b, err := io.ReadAll(jail); err != nil || !strings.HasSuffix(string(b), "not you\n") {
		t.Errorf("the jail waiting on Expect read %q, %v; want the refusal, then its end", b, err)
	}

	p.mu.Lock()
	before := p.allowed[target{"api.test", port}].BytesIn
	p.mu.Unlock()
	jail, served = pair(t)
	go p.serveHTTP(served)
	fmt.Fprintf(jail, "GET http://api.test:%d/reset HTTP/1.1\r\nHost: api.test:%d\r\n\r\n", port, port)
	got := make([]byte, len(answer))
	jail.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(jail, got); err != nil {
		t.Fatal(err)
	}
	// Counted as each write returns, which may be just after the jail
	// has the bytes.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		p.mu.Lock()
		in := p.allowed[target{"api.test", port}].BytesIn - before
		p.mu.Unlock()
		if in == int64(len(answer)) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("an answer read whole, its connection open, counted %d bytes in of %d", in, len(answer))
		}
	}
	close(reset)
	if n, err := jail.Read(make([]byte, 1)); !isReset(err) {
		t.Errorf("after the server's reset the jail's read returned %d, %v; want a connection reset", n, err)
	}
}

// uploadReset has the jail upload 64 MiB on c while it reads the answer
// to its end, and reports whether it learnt of a reset: by its read, or
// by its write, as a socket reports a reset once, to whichever call
// meets it first.
func uploadReset(c net.Conn) (bool, error) {
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(make([]byte, 64<<20))
		wrote <- err
	}()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := io.ReadAll(c)
	if isReset(err) {
		return true, err
	}
	c.Close() // a write still waiting ends
	return isReset(<-wrote), err
}

// A server's reset while the jail still uploads reaches the jail as a
// reset, though a write of the upload, not the read of the answer, met
// it on the way (a socket reports a reset once): through the relay and
// through the HTTP proxy's forwarding, five times each, as the two race.
func TestServersResetDuringAnUpload(t *testing.T) {
	answer := randomBytes(12, 2<<20)
	p, _ := newTestProxy(t, Config{})
	for round := range 5 {
		jailSide, farSide, done := relayed(t, p)
		go func() {
			io.CopyN(io.Discard, farSide, 1<<20)
			farSide.Write(answer)
			abort(farSide)
		}()
		if reset, err := uploadReset(jailSide); !reset {
			t.Errorf("relay, round %d: the jail's read of the cut answer ended with %v, and its upload without a reset", round, err)
		}
		ended(t, done)
	}

	port := server(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.CopyN(io.Discard, req.Body, 1<<20)
		c.Write(append([]byte("HTTP/1.0 200 OK\r\n\r\n"), answer...))
		abort(c)
	})
	p, _ = newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	for round := range 5 {
		jail, served := pair(t)
		go p.serveHTTP(served)
		fmt.Fprintf(jail, "POST http://api.test:%d/up HTTP/1.1\r\nHost: api.test:%d\r\nContent-Length: %d\r\n\r\n", port, port, 64<<20)
		if reset, err := uploadReset(jail); !reset {
			t.Errorf("forwarding, round %d: the jail's read of the cut answer ended with %v, and its upload without a reset", round, err)
		}
	}
}

// The HTTP proxy's forwarding sends the server one Connection header, its
// own, and no trailer (a Host among them is not the one checked).
func TestHTTPProxyForwardDropsHopByHop(t *testing.T) {
	seen := make(chan *http.Request, 1)
	port := server(t, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		seen <- req
		fmt.Fprintf(c, "HTTP/1.1 204 No Content\r\n\r\n")
	})
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test", Port: port}},
		Hosts: map[string]string{"api.test": "127.0.0.1"}})
	jail, served := pair(t)
	go p.serveHTTP(served)
	jail.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(jail, "POST http://api.test:%d/up HTTP/1.1\r\nHost: api.test:%d\r\nConnection: keep-alive, Upgrade\r\nUpgrade: h2c\r\nTransfer-Encoding: chunked\r\nTrailer: Host\r\n\r\n4\r\nbody\r\n0\r\nHost: evil.test\r\n\r\n", port, port)
	if resp, err := http.ReadResponse(bufio.NewReader(jail), nil); err != nil || resp.StatusCode != 204 {
		t.Fatalf("%v %v", resp, err)
	}
	req := <-seen
	if c := req.Header.Values("Connection"); len(c) != 1 || c[0] != "close" {
		t.Errorf("the server read Connection %q; want close alone", c)
	}
	if u := req.Header.Get("Upgrade"); u != "" {
		t.Errorf("the server read Upgrade %q", u)
	}
	if len(req.Trailer) > 0 {
		t.Errorf("the server read trailers %v", req.Trailer)
	}
}
