// What a relay knows of its jail side's writes to the server: enough to
// tell a jail that left a connection idle from one waiting on a slow
// server (halfOpen), and a server's clean end from one that hides its
// reset (resetSeen).

package proxy

import (
	"errors"
	"io"
	"net"
	"sync/atomic"
	"syscall"
	"time"
)

// progress is what is known of a relay's jail side, as its writes to
// the server go: the bytes written, whether a write is waiting on the
// server, and whether one met the server's reset.
type progress struct {
	wrote   atomic.Int64
	writing atomic.Bool
	reset   atomic.Bool
}

// resetLook is how long resetSeen gives a write under way to return.
const resetLook = 100 * time.Millisecond

// resetSeen reports whether a write of the jail's side met the server's
// reset. A socket reports a reset once, to whichever call meets it
// first: when a write did, the server's side then reads a clean end,
// which must not pass for one (a download the server cut would look
// whole). A write under way when the server's side ended is given
// resetLook to return: one that meets a reset returns at once.
func (pr *progress) resetSeen() bool {
	for deadline := time.Now().Add(resetLook); pr.writing.Load() && time.Now().Before(deadline); {
		time.Sleep(time.Millisecond)
	}
	return pr.reset.Load()
}

// watched is a destination whose writes progress follows.
type watched struct {
	w io.Writer
	p *progress
}

func (w watched) Write(b []byte) (int, error) {
	w.p.writing.Store(true)
	n, err := w.w.Write(b)
	w.p.wrote.Add(int64(n))
	if errors.Is(err, syscall.ECONNRESET) {
		// The server's reset, not its close: a reset that comes after
		// the server's end (its kernel refusing what it was sent after
		// its FIN) is EPIPE, and the end it follows was clean, as a
		// host's client reads it. Noted before writing is cleared:
		// resetSeen reads them so.
		w.p.reset.Store(true)
	}
	w.p.writing.Store(false)
	return n, err
}

// halfOpenIdle is a relayed connection's time, once its server ended its
// side, to go without progress on the jail's side before it is reset:
// long enough for a program between two writes, short against a program
// that never closes what it read to the end.
const halfOpenIdle = 10 * time.Second

// halfOpen waits for the jail's side of a connection whose server ended
// its own (done: the jail's side ended too), and resets both sides once
// a whole p.halfOpenIdle (so after 1 to 2 of them) passed with nothing
// written to the server and no write waiting on it: a program finishing
// an upload after a half-close sends at once, and one that keeps a
// connection the server ended (a leaky pool) would hold one of the
// stack's slots with it as long as it lives.
func (p *proxy) halfOpen(done <-chan struct{}, client, server net.Conn, up *progress) {
	tick := time.NewTicker(p.halfOpenIdle)
	defer tick.Stop()
	last := up.wrote.Load()
	for {
		select {
		case <-done:
			return
		case <-tick.C:
		}
		n := up.wrote.Load()
		if n == last && !up.writing.Load() {
			abort(client)
			abort(server)
			return
		}
		last = n
	}
}
