// The fake address pool: each allowed name the resolver answers for gets an
// address of its own, so a connection to it names its destination exactly.

package proxy

import (
	"errors"
	"hash/fnv"
	"net/netip"
	"sync"
	"time"
)

// The pools (docs/design/netstack.md §1): ranges the policy already holds
// internal, so no real destination is ever mistaken for a fake one. A v6
// fake is its v4 twin in the low 32 bits, so both name the same entry.
var (
	fakeV4 = netip.MustParsePrefix("198.18.0.0/15")
	fakeV6 = netip.MustParsePrefix("fd6a:696c:0:1::/96")
)

const (
	// maxNames bounds the pool: a wildcard entry lets the jail ask for
	// any number of names.
	maxNames = 4096
	poolSize = 1 << (32 - 15)
	// fresh is how long a name's vetted addresses are used before the
	// host is asked again: the answers' TTL, so the A and AAAA a client
	// asks together cost one lookup.
	fresh = 5 * time.Second
)

var errPoolFull = errors.New("more names than the resolver keeps (4096)")

// names maps allowed names to fake addresses and back. Entries stay for
// the run: a program may connect long after it resolved.
type names struct {
	mu     sync.Mutex
	byName map[string]*entry
	bySlot map[uint32]*entry // offset in fakeV4
}

// entry is a name the resolver answered for, and where it may go.
type entry struct {
	name   string
	fake   netip.Addr // v4
	addrs  []netip.Addr
	pinned bool
	vetted time.Time
}

func newNames() *names {
	return &names{byName: map[string]*entry{}, bySlot: map[uint32]*entry{}}
}

// put records name's vetted addresses and returns its fake v4 address:
// the one it had, or a slot from a hash of the name (the same run after
// run, so a fake address a program cached across runs most likely still
// means its name), probing on from a taken one.
func (n *names) put(name string, addrs []netip.Addr, pinned bool) (netip.Addr, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if e := n.byName[name]; e != nil {
		e.addrs, e.pinned, e.vetted = addrs, pinned, time.Now()
		return e.fake, nil
	}
	if len(n.byName) >= maxNames {
		return netip.Addr{}, errPoolFull
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	slot := h.Sum32() % poolSize
	// Never the first or last address of the range; there are far more
	// slots than names, so a free one comes soon.
	for slot == 0 || slot == poolSize-1 || n.bySlot[slot] != nil {
		slot = (slot + 1) % poolSize
	}
	base := fakeV4.Addr().As4()
	v := uint32(base[0])<<24 | uint32(base[1])<<16 | slot
	e := &entry{name: name, fake: netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}),
		addrs: addrs, pinned: pinned, vetted: time.Now()}
	n.byName[name], n.bySlot[slot] = e, e
	return e.fake, nil
}

// recent is name's fake address when its addresses were vetted less than
// fresh ago.
func (n *names) recent(name string) (netip.Addr, bool) {
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.byName[name]
	if e == nil || time.Since(e.vetted) >= fresh {
		return netip.Addr{}, false
	}
	return e.fake, true
}

// lookup is the entry of a fake address, v4 or v6 (a copy: put may change
// the original).
func (n *names) lookup(a netip.Addr) (entry, bool) {
	a = a.Unmap()
	if a.Is6() && fakeV6.Contains(a) {
		b := a.As16()
		a = netip.AddrFrom4([4]byte(b[12:]))
	}
	if !fakeV4.Contains(a) {
		return entry{}, false
	}
	b := a.As4()
	n.mu.Lock()
	defer n.mu.Unlock()
	e := n.bySlot[(uint32(b[1])&1)<<16|uint32(b[2])<<8|uint32(b[3])]
	if e == nil {
		return entry{}, false
	}
	return *e, true
}

// len is how many names the pool holds.
func (n *names) len() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return len(n.byName)
}

// isFake reports whether a is in either pool.
func isFake(a netip.Addr) bool {
	a = a.Unmap()
	return fakeV4.Contains(a) || fakeV6.Contains(a)
}

// twin is the v6 fake address of a v4 one.
func twin(v4 netip.Addr) netip.Addr {
	b := fakeV6.Addr().As16()
	copy(b[12:], v4.AsSlice())
	return netip.AddrFrom16(b)
}
