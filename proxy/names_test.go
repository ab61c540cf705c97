// The fake address pool.

package proxy

import (
	"errors"
	"fmt"
	"hash/fnv"
	"net/netip"
	"testing"
)

// TestPoolDeterministic: a name gets the same address in every run (a
// fresh pool), in 198.18.0.0/15, and its v6 twin maps to the same entry.
func TestPoolDeterministic(t *testing.T) {
	addrs := []netip.Addr{netip.MustParseAddr("203.0.113.7")}
	a, err := newNames().put("api.test", addrs, false)
	if err != nil {
		t.Fatal(err)
	}
	n := newNames()
	n.put("other.test", nil, false)
	b, _ := n.put("api.test", addrs, false)
	if a != b || !fakeV4.Contains(a) {
		t.Fatalf("api.test got %s, then %s: want one address in %s", a, b, fakeV4)
	}
	if again, _ := n.put("api.test", nil, true); again != b {
		t.Errorf("vetted again, api.test moved from %s to %s", b, again)
	}
	v6 := twin(b)
	if v6 != netip.MustParseAddr("fd6a:696c:0:1::"+b.String()) || !isFake(v6) {
		t.Errorf("twin(%s) = %s", b, v6)
	}
	for _, x := range []netip.Addr{b, v6, netip.AddrFrom16(b.As16())} {
		e, ok := n.lookup(x)
		if !ok || e.name != "api.test" || !e.pinned {
			t.Errorf("lookup(%s) = %+v, %v", x, e, ok)
		}
	}
	for _, s := range []string{"198.18.0.1", "198.19.255.254", "203.0.113.7", "fd6a:696c:0:1::c612:1", "fd6a:696c::2", "::1"} {
		if e, ok := n.lookup(netip.MustParseAddr(s)); ok && e.fake != b {
			t.Errorf("lookup(%s) = %+v: an address the pool never gave", s, e)
		}
	}
	if !isFake(netip.MustParseAddr("198.19.255.254")) || isFake(netip.MustParseAddr("198.20.0.1")) || isFake(netip.MustParseAddr("fd6a:696c::2")) {
		t.Error("isFake is not the two pools")
	}
}

// TestPoolCollision: two names hashing to one slot get neighbouring
// addresses, each mapping back to its own name, whichever came first.
func TestPoolCollision(t *testing.T) {
	slot := func(s string) uint32 {
		h := fnv.New32a()
		h.Write([]byte(s))
		return h.Sum32() % poolSize
	}
	seen := map[uint32]string{}
	var x, y string
	for i := 0; x == ""; i++ {
		s := fmt.Sprintf("n%d.test", i)
		if o, ok := seen[slot(s)]; ok {
			x, y = o, s
		}
		seen[slot(s)] = s
	}
	n := newNames()
	ax, _ := n.put(x, nil, false)
	ay, _ := n.put(y, nil, false)
	if ax == ay || ay != ax.Next() && slot(x) != poolSize-2 {
		t.Errorf("%s and %s (one slot) got %s and %s", x, y, ax, ay)
	}
	for name, a := range map[string]netip.Addr{x: ax, y: ay} {
		if e, ok := n.lookup(a); !ok || e.name != name {
			t.Errorf("lookup(%s) = %q, want %q", a, e.name, name)
		}
	}
}

// TestPoolBound: the pool holds maxNames names, each its own address; the
// next is refused, and the names it has still resolve.
func TestPoolBound(t *testing.T) {
	n := newNames()
	given := map[netip.Addr]bool{}
	for i := 0; i < maxNames; i++ {
		a, err := n.put(fmt.Sprintf("h%d.x.test", i), nil, false)
		if err != nil {
			t.Fatalf("name %d: %v", i, err)
		}
		if given[a] || a == fakeV4.Addr() || a == netip.MustParseAddr("198.19.255.255") {
			t.Fatalf("name %d got %s again, or an edge of the pool", i, a)
		}
		given[a] = true
	}
	if _, err := n.put("one-more.x.test", nil, false); !errors.Is(err, errPoolFull) {
		t.Errorf("name %d: %v, want %v", maxNames+1, err, errPoolFull)
	}
	if _, err := n.put("h7.x.test", nil, false); err != nil {
		t.Errorf("a name the full pool holds: %v", err)
	}
	if n.len() != maxNames {
		t.Errorf("%d names", n.len())
	}
}
