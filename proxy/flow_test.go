// flow: in order, every byte counted, pieces made only as needed, and an
// end that leaves no reader behind.

package proxy

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"net"
	"runtime"
	"testing"
	"time"
)

// chopReader reads r in pieces of random sizes up to max.
type chopReader struct {
	r   io.Reader
	rng *rand.Rand
	max int
}

func (c *chopReader) Read(b []byte) (int, error) {
	return c.r.Read(b[:min(len(b), 1+c.rng.IntN(c.max))])
}

// slowWriter keeps each write's bytes, sleeping first: the reader gets
// ahead, so a piece handed back before it was written would be
// overwritten while the writer still holds it.
type slowWriter struct {
	got   bytes.Buffer
	pause time.Duration
}

func (w *slowWriter) Write(b []byte) (int, error) {
	time.Sleep(w.pause)
	return w.got.Write(b)
}

func TestFlowCopiesInOrderAndCounts(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	want := make([]byte, 12<<20)
	for i := range want {
		want[i] = byte(rng.Uint32())
	}
	src := &chopReader{r: bytes.NewReader(want), rng: rng, max: 3 * flowBuf / 2}
	dst := &slowWriter{pause: 200 * time.Microsecond}
	counted := 0
	flow(dst, src, func(n int) { counted += n })
	if !bytes.Equal(dst.got.Bytes(), want) {
		t.Fatalf("flow wrote %d bytes that differ from the %d read", dst.got.Len(), len(want))
	}
	if counted != len(want) {
		t.Errorf("counted %d bytes, wrote %d", counted, len(want))
	}
}

// A source slower than its destination needs one piece and the one the
// reader takes while the writer still holds the first; not all three.
func TestFlowMakesPiecesAsNeeded(t *testing.T) {
	src, far := net.Pipe()
	defer src.Close()
	go func() {
		for range 20 {
			far.Write(make([]byte, 1000))
			time.Sleep(2 * time.Millisecond)
		}
		far.Close()
	}()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	flow(io.Discard, src, func(int) {})
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got >= 3*flowBuf {
		t.Errorf("a slow source made flow allocate %d bytes, all %d pieces of %d", got, flowPieces, flowBuf)
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("gone") }

// When the destination fails flow returns at once, and its reader, held
// in a read, ends as the caller closes the source.
func TestFlowEndsWhenDestinationFails(t *testing.T) {
	src, far := net.Pipe()
	base := runtime.NumGoroutine()
	go func() { far.Write(make([]byte, 100)) }()
	returned := make(chan struct{})
	go func() {
		flow(failWriter{}, src, func(int) {})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("flow did not return when its destination failed")
	}
	src.Close()
	far.Close()
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			t.Fatalf("%d goroutines left after flow ended and its source closed, from %d:\n%s",
				runtime.NumGoroutine(), base, buf[:runtime.Stack(buf, true)])
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// A relayed connection whose data flows both ways at once arrives whole
// each way, each end learns the other finished, and the record counts
// every byte.
func TestRelayFlowsBothWays(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, client := pair(t)
	server, farSide := pair(t)
	rng := rand.New(rand.NewPCG(3, 4))
	down, up := make([]byte, 9<<20), make([]byte, 5<<20)
	for _, b := range [][]byte{down, up} {
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
	}
	relayed := make(chan struct{})
	go func() {
		p.relay(target{"api.test", 443}, client, server, nil)
		close(relayed)
	}()
	// Each end sends, says it is done, and reads to the other's end.
	ends := func(c net.Conn, send []byte, got chan<- []byte) {
		go func() {
			c.Write(send)
			closeWrite(c)
		}()
		b, _ := io.ReadAll(c)
		got <- b
	}
	gotDown, gotUp := make(chan []byte, 1), make(chan []byte, 1)
	go ends(jailSide, up, gotDown)
	go ends(farSide, down, gotUp)
	for _, c := range []struct {
		who       string
		got, want []byte
	}{{"the jail", <-gotDown, down}, {"the server", <-gotUp, up}} {
		if !bytes.Equal(c.got, c.want) {
			t.Errorf("%s got %d bytes that differ from the %d sent", c.who, len(c.got), len(c.want))
		}
	}
	select {
	case <-relayed:
	case <-time.After(5 * time.Second):
		t.Fatal("the relay did not end after both ends finished")
	}
	p.mu.Lock()
	a := *p.allowed[target{"api.test", 443}]
	p.mu.Unlock()
	if a.BytesIn != int64(len(down)) || a.Bytes != int64(len(up)) {
		t.Errorf("counted %d bytes in and %d out, want %d and %d", a.BytesIn, a.Bytes, len(down), len(up))
	}
}
