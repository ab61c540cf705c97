// The link: gVisor's fdbased endpoint on the TUN fd, held back from
// reading until the stack around it is ready.

package netstack

import (
	"fmt"
	"sync"

	"gvisor.dev/gvisor/pkg/tcpip"
	"gvisor.dev/gvisor/pkg/tcpip/link/fdbased"
	"gvisor.dev/gvisor/pkg/tcpip/stack"
)

// newLink makes the endpoint that reads and writes the TUN fd; ended is
// called when its reader stops.
func newLink(fd int, mtu uint32, ended func(tcpip.Error)) (*heldLink, error) {
	ep, err := fdbased.New(&fdbased.Options{
		FDs: []int{fd},
		MTU: mtu,
		// IFF_TUN: IP packets, no Ethernet header, so no ARP or NDP.
		EthernetHeader: false,
		// The jail's kernel checksummed what it wrote.
		RXChecksumOffload: true,
		// Without a vnet header the kernel cannot finish a checksum,
		// so what the stack writes must carry its own.
		TXChecksumOffload: false,
		// One processor: the goroutine that reads a packet also runs it
		// through the stack before reading the next. With more, the
		// reader queues packets for them with no bound, so a jail
		// writing faster than the stack works would grow the helper's
		// memory; with one, the backlog stays in the TUN's own queue
		// (500 packets), where the kernel drops what does not fit.
		ProcessorsPerChannel: 1,
		ClosedFunc:           ended,
	})
	if err != nil {
		return nil, fmt.Errorf("netstack: the TUN's link endpoint: %w", err)
	}
	return &heldLink{LinkEndpoint: ep, held: true}, nil
}

// heldLink defers the endpoint's Attach, which starts its reader, until
// release: the stack attaches the link as it creates the NIC, before the
// NIC is configured.
type heldLink struct {
	stack.LinkEndpoint

	mu   sync.Mutex
	held bool
	d    stack.NetworkDispatcher // the Attach held back
}

// Attach implements stack.LinkEndpoint.
func (l *heldLink) Attach(d stack.NetworkDispatcher) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		l.d = d
		return
	}
	l.LinkEndpoint.Attach(d)
}

// IsAttached implements stack.LinkEndpoint.
func (l *heldLink) IsAttached() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.held {
		return l.d != nil
	}
	return l.LinkEndpoint.IsAttached()
}

// release lets the held Attach through: the reader starts.
func (l *heldLink) release() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.held = false
	if l.d != nil {
		l.LinkEndpoint.Attach(l.d)
		l.d = nil
	}
}
