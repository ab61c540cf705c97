// Copying a connection whose data flows: a reader of its own fills the
// next piece while the last is written, from pieces the whole helper
// shares a budget of.

package proxy

import (
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// flowBuf is each piece flow reads into, flowPieces how many one flow
// may hold, and flowBudget how many the whole helper may hold at once
// (6 MiB). Through the stack a download's copy is two halves of about
// equal CPU: reading the host's socket, and the stack taking the bytes
// in; done one after the other they leave a core idle. With a reader of
// their own and pieces this large, the bench's 100 MB download went from
// 1.15-1.3 to 1.5-1.6 GB/s (2 cores; two pieces of 256 KiB: 1.44, three
// of 512 KiB: 1.59). A flow that finds the budget spent stays in
// relayCopy's small copy: slower, but never more memory.
const (
	flowBuf    = 512 << 10
	flowPieces = 3
	flowBudget = 12
)

// flowPause is how long a read of a flowing connection waits before the
// flow ends, so that a connection left idle (a keep-alive between
// responses) holds no piece while it waits.
const flowPause = 100 * time.Millisecond

// readDeadliner is a source whose reads can be bounded (every
// connection relayed is one).
type readDeadliner interface{ SetReadDeadline(time.Time) error }

// pieceStore is the helper's budget of flow's pieces: a token for each
// piece held, and a pool to reuse them from.
type pieceStore struct {
	tokens chan struct{}
	pool   sync.Pool
}

func newPieceStore(budget int) *pieceStore {
	return &pieceStore{tokens: make(chan struct{}, budget)}
}

// get returns a piece, or false when the budget is spent.
func (ps *pieceStore) get() ([]byte, bool) {
	select {
	case ps.tokens <- struct{}{}:
	default:
		return nil, false
	}
	if b, ok := ps.pool.Get().(*[]byte); ok {
		return *b, true
	}
	return make([]byte, flowBuf), true
}

// put gives a piece back.
func (ps *pieceStore) put(b []byte) {
	b = b[:cap(b)]
	ps.pool.Put(&b)
	<-ps.tokens
}

// piece is one read: its bytes, and the read's error. last says the
// reader stopped after it: the source has slowed.
type piece struct {
	b    []byte
	err  error
	last bool
}

// aFlow is what flow's two goroutines share: the pieces it made, given
// back by whichever of them ends last.
type aFlow struct {
	ps   *pieceStore
	made [][]byte // the reader's alone until it ends
	left atomic.Int32
}

// end is each goroutine's last act; the last one out gives the pieces
// back.
func (f *aFlow) end() {
	if f.left.Add(-1) == 0 {
		for _, b := range f.made {
			f.ps.put(b)
		}
	}
}

// flow copies src to dst, telling count what each write wrote, with a
// goroutine that reads the next piece while this one writes the last, in
// order. It returns false at once when ps has no piece to give, and
// false too after writing a read that filled less than half its piece
// or waited flowPause: the source slowed, and relayCopy's small copy
// serves it again without holding pieces while it idles (a source
// without read deadlines would keep the reader, and the pieces, in that
// read until its next data). It returns true when either side ended or
// failed, with what stopped it as relayCopy returns it. A write that waits (a jail that reads slowly) keeps its
// pieces: four such flows spend the budget, and others copy small.
//
// When dst fails, flow returns at once and the reader ends at its
// current read's return: at the latest flowPause later for a source
// with read deadlines, else when src is closed (relay closes it once
// the other direction ends); what it read then is dropped, as dst is
// gone.
func flow(dst io.Writer, src io.Reader, count func(int), ps *pieceStore) (ended bool, readErr, writeErr error) {
	first, ok := ps.get()
	if !ok {
		return false, nil, nil
	}
	f := &aFlow{ps: ps, made: [][]byte{first}}
	f.left.Store(2)
	defer f.end()
	free := make(chan []byte, flowPieces)
	free <- first
	full := make(chan piece, flowPieces)
	done := make(chan struct{})
	defer close(done)
	go f.fill(src, free, full, done)
	for {
		pc := <-full
		if len(pc.b) > 0 {
			n, err := dst.Write(pc.b)
			count(n)
			if err != nil {
				return true, nil, err
			}
		}
		if pc.err == io.EOF {
			return true, nil, nil
		}
		if pc.err != nil {
			return true, pc.err, nil
		}
		if pc.last {
			return false, nil, nil
		}
		free <- pc.b[:cap(pc.b)]
	}
}

// fill is flow's reader: it fills a free piece (or a new one, while it
// holds fewer than flowPieces and the budget allows), and passes it on,
// until src ends or fails or slows, or flow is done.
func (f *aFlow) fill(src io.Reader, free chan []byte, full chan<- piece, done <-chan struct{}) {
	defer f.end()
	dl, _ := src.(readDeadliner)
	for {
		select {
		case <-done: // before a piece: a free one would race it
			return
		default:
		}
		var b []byte
		select {
		case b = <-free:
		default:
			if len(f.made) < flowPieces {
				if nb, ok := f.ps.get(); ok {
					f.made = append(f.made, nb)
					b = nb
					break
				}
			}
			select {
			case b = <-free:
			case <-done:
				return
			}
		}
		if dl != nil {
			dl.SetReadDeadline(time.Now().Add(flowPause))
		}
		n, err := src.Read(b)
		// The deadline's timeout (gonet's own error type, hence not
		// os.ErrDeadlineExceeded); a kernel ETIMEDOUT passes too, and
		// the small copy's next read returns the end.
		var ne net.Error
		paused := dl != nil && errors.As(err, &ne) && ne.Timeout()
		if paused {
			err = nil // the flow ends, the connection does not
		}
		pc := piece{b: b[:n], err: err, last: paused || err == nil && n < len(b)/2}
		if dl != nil && pc.last {
			dl.SetReadDeadline(time.Time{}) // relayCopy's reads wait as long as it takes
		}
		select {
		case full <- pc:
		case <-done:
			return
		}
		if err != nil || pc.last {
			return
		}
	}
}
