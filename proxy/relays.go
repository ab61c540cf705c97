// The relays under way, as the end of a run waits for them: the jail's
// processes are gone, but its kernel still sends what they wrote, from a
// network that lives until the helper ends.

package proxy

import (
	"net"
	"sync"
	"time"
)

// settleTime bounds how long the helper, told to end, waits for the
// handshakes and the relays under way (a relay's jail side; an
// intercepted session whole): the program has gone, so each jail side
// ends at once (its kernel sending what it had left, then its end), but
// a loaded host may not have run them yet, and a server may be slow to
// take the last bytes. settleCut is how long the relays then still going
// get to count what they wrote once their servers' connections are
// closed. Both fit in the second the runner gives the helper for its
// last report (jail/proxyctl.c's proxy_stop).
const (
	settleTime = 500 * time.Millisecond
	settleCut  = 100 * time.Millisecond
)

// relays counts the relays whose jail side is under way and holds the
// server connection of each, so that the end of a run can cut those
// still going.
type relays struct {
	mu    sync.Mutex
	n     int
	conns map[net.Conn]struct{}
	// idle, while wait waits, is closed as n reaches zero.
	idle chan struct{}
}

func newRelays() *relays { return &relays{conns: map[net.Conn]struct{}{}} }

// start counts a relay's jail side, to server (nil: none to cut); the
// func it returns ends it, once what that side moved is counted.
func (r *relays) start(server net.Conn) (end func()) {
	r.mu.Lock()
	r.n++
	if server != nil {
		r.conns[server] = struct{}{}
	}
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if server != nil {
			delete(r.conns, server)
		}
		r.n--
		if r.n == 0 && r.idle != nil {
			close(r.idle)
			r.idle = nil
		}
	}
}

// wait waits until no relay is under way, or the deadline; it reports
// whether none is.
func (r *relays) wait(deadline time.Time) bool {
	r.mu.Lock()
	if r.n == 0 {
		r.mu.Unlock()
		return true
	}
	if r.idle == nil {
		r.idle = make(chan struct{})
	}
	idle := r.idle
	r.mu.Unlock()
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}

// cut closes the server connection of every relay still going: a write
// waiting on a server that takes nothing returns what it wrote, and its
// relay counts it and ends. Closed, not reset: what was counted is in
// the host's socket, and still reaches the server.
func (r *relays) cut() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for c := range r.conns {
		c.Close()
	}
}

// settle waits, d at most, for the interceptions' handshakes under way
// and for every relay's jail side to end: a command that sent and then
// ended (a fire-and-forget upload) would lose what its kernel had not
// sent yet if the helper, and with it the jail's network, ended first.
// Relays still going then are cut (an intercepted session, which counts
// as bytes pass, is not), and given settleCut to count what they wrote,
// so that the last report has it.
func (p *proxy) settle(d time.Duration) {
	deadline := time.Now().Add(d)
	done := make(chan struct{})
	go func() {
		p.handshakes.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(d):
	}
	if !p.relays.wait(deadline) {
		p.relays.cut()
		p.relays.wait(time.Now().Add(settleCut))
	}
}
