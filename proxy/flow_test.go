// flow: in order, every byte counted, pieces made only as needed, and an
// end that leaves no reader behind.

package proxy

import (
	"bytes"
	"errors"
	"fmt"
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

func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.Uint32())
	}
	return b
}

// tokensBack waits until every piece of ps is given back.
func tokensBack(t *testing.T, ps *pieceStore, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for len(ps.tokens) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%s: %d pieces still held", what, len(ps.tokens))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// relayCopy delivers every byte in order and counts each once, whatever
// the budget: flowing with three pieces, with one, and with none (pipe's
// small copy alone); reads of random sizes make flow start and stop.
func TestRelayCopyInOrderAndCounts(t *testing.T) {
	want := randomBytes(1, 12<<20)
	for _, budget := range []int{flowBudget, 1, 0} {
		ps := newPieceStore(budget)
		src := &chopReader{r: bytes.NewReader(want), rng: rand.New(rand.NewPCG(5, 6)), max: 3 * flowBuf / 2}
		dst := &slowWriter{pause: 100 * time.Microsecond}
		counted := 0
		relayCopy(dst, src, func(n int) { counted += n }, ps)
		if !bytes.Equal(dst.got.Bytes(), want) {
			t.Fatalf("budget %d: wrote %d bytes that differ from the %d read", budget, dst.got.Len(), len(want))
		}
		if counted != len(want) {
			t.Errorf("budget %d: counted %d bytes, wrote %d", budget, counted, len(want))
		}
		tokensBack(t, ps, fmt.Sprintf("budget %d, after the end", budget))
	}
}

// The budget is the helper's: past it no piece is given, until one is
// given back; and a flow that finds it spent leaves the copy to pipe.
func TestPieceBudget(t *testing.T) {
	ps := newPieceStore(2)
	a, okA := ps.get()
	_, okB := ps.get()
	if !okA || !okB {
		t.Fatal("a budget of two gave fewer")
	}
	if _, ok := ps.get(); ok {
		t.Fatal("a third piece past a budget of two")
	}
	if ended, _, _ := flow(io.Discard, bytes.NewReader(make([]byte, 1<<20)), func(int) {}, ps); ended {
		t.Error("flow ran with the budget spent")
	}
	ps.put(a)
	if _, ok := ps.get(); !ok {
		t.Error("no piece after one was given back")
	}
}

// A flow whose source pauses gives its pieces back while the connection
// stays open, and flows again when data does: after a read that fills
// less than half a piece, or one that waits flowPause.
func TestFlowGivesPiecesBackWhenSlow(t *testing.T) {
	for _, tail := range []int{1000, 3 * flowBuf / 4} {
		src, far := net.Pipe()
		ps := newPieceStore(flowBudget)
		// net.Pipe hands each read what one write gave, up to its
		// length: after the small read that starts the flow and eight
		// whole pieces, the tail is the last read before the pause.
		burst := randomBytes(2, relayIdle+8*flowBuf+tail)
		var got bytes.Buffer
		copied := make(chan struct{})
		go func() {
			relayCopy(&got, src, func(int) {}, ps)
			close(copied)
		}()
		for round := range 2 {
			if _, err := far.Write(burst); err != nil {
				t.Fatal(err)
			}
			tokensBack(t, ps, fmt.Sprintf("tail %d, round %d, paused", tail, round))
		}
		far.Close()
		<-copied
		if !bytes.Equal(got.Bytes(), append(burst[:len(burst):len(burst)], burst...)) {
			t.Fatalf("tail %d: got %d bytes that differ from the two bursts", tail, got.Len())
		}
	}
}

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("gone") }

// When the destination fails flow returns at once, and its reader, held
// in a read, ends as the caller closes the source, giving its pieces
// back.
func TestFlowEndsWhenDestinationFails(t *testing.T) {
	src, far := net.Pipe()
	base := runtime.NumGoroutine()
	go func() { far.Write(make([]byte, flowBuf)) }()
	ps := newPieceStore(flowBudget)
	returned := make(chan struct{})
	go func() {
		if ended, readErr, writeErr := flow(failWriter{}, src, func(int) {}, ps); !ended || readErr != nil || writeErr == nil {
			t.Errorf("flow returned %v, %v, %v; want it ended by the destination's failure", ended, readErr, writeErr)
		}
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
	tokensBack(t, ps, "after the destination failed")
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
	// Each end sends while it reads; the server ends its side as soon
	// as it has written, while the jail's upload may still be on its way.
	gotDown, gotUp := make(chan []byte, 1), make(chan []byte, 1)
	go func() {
		go func() {
			jailSide.Write(up)
			closeWrite(jailSide)
		}()
		b, _ := io.ReadAll(jailSide)
		gotDown <- b
	}()
	go func() {
		go func() {
			farSide.Write(down)
			closeWrite(farSide)
		}()
		b, _ := io.ReadAll(farSide)
		gotUp <- b
	}()
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
