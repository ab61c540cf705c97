// The record counts a relayed connection's bytes as they pass.

package proxy

import (
	"io"
	"net"
	"testing"
	"time"
)

// A connection's bytes are in the record while it is still open: the last
// report, made as the run ends, may come before the relay does.
func TestRelayCountsAsItGoes(t *testing.T) {
	p, _ := newTestProxy(t, Config{})
	jailSide, client := net.Pipe()
	server, farSide := net.Pipe()
	go p.relay(target{"api.test", 22}, client, server, nil)
	go io.Copy(io.Discard, farSide)
	go io.Copy(io.Discard, jailSide)
	jailSide.Write([]byte("hello, server"))
	farSide.Write([]byte("hello, jail!"))
	deadline := time.Now().Add(5 * time.Second)
	for {
		p.mu.Lock()
		a := p.allowed[target{"api.test", 22}]
		in, out := a.BytesIn, a.Bytes
		p.mu.Unlock()
		if in == 12 && out == 13 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("open connection counted %d bytes in, %d out; want 12 and 13", in, out)
		}
		time.Sleep(10 * time.Millisecond)
	}
	jailSide.Close()
	farSide.Close()
}
