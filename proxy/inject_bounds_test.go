package proxy

import (
	"context"
	"errors"
	"net"
	"net/http"
	"testing"
	"time"
)

// Without a header named, only a header meant for a credential gets the
// value, and only as the whole value or after an auth scheme: a header
// the server may echo back (an X-Org it does not know) keeps the
// placeholder.
func TestSubstituteWhere(t *testing.T) {
	ph := "jail-placeholder-0123456789abcdef0123456789abcdef"
	free := &Credential{Env: "K", Placeholder: ph, Value: "REAL"}
	named := &Credential{Env: "N", Placeholder: ph, Value: "REAL", Header: "X-Custom"}
	for _, tc := range []struct {
		c          *Credential
		name, v    string
		want       string
		substitued bool
	}{
		{free, "Authorization", "Bearer " + ph, "Bearer REAL", true},
		{free, "Authorization", "token  " + ph + " ", "token REAL", true},
		{free, "X-Api-Key", ph, "REAL", true},
		{free, "Api-Key", ph, "REAL", true},
		{free, "X-Goog-Api-Key", ph, "REAL", true},
		{free, "Private-Token", ph, "REAL", true},
		{free, "X-Org", ph, ph, false},
		{free, "Cookie", "session=" + ph, "session=" + ph, false},
		{free, "Authorization", "Bearer a " + ph, "Bearer a " + ph, false},
		{free, "Content-Type", "text/plain; charset=" + ph, "text/plain; charset=" + ph, false},
		{named, "x-custom", ph, "REAL", true},
		{named, "Authorization", "Bearer " + ph, "Bearer " + ph, false},
		{named, "X-Custom", "pre" + ph, "pre" + ph, false},
	} {
		h := http.Header{tc.name: {tc.v}}
		used := substitute(h, []*Credential{tc.c})
		if got := h[tc.name][0]; got != tc.want || (len(used) == 1) != tc.substitued {
			t.Errorf("%s: %q -> %q (used %d), want %q", tc.name, tc.v, got, len(used), tc.want)
		}
	}
}

// The connections to real servers that intercepted sessions open are
// bounded all together: past maxUpstreams a dial waits, and gives up
// with its request; closing one frees its place.
func TestUpstreamsBounded(t *testing.T) {
	p, _ := newTestProxy(t, Config{Mode: "allowlist", Allow: []Allow{{Host: "api.test"}}, Hosts: map[string]string{"api.test": "127.0.0.1"}})
	for range maxUpstreams - 1 {
		p.upstreams <- struct{}{}
	}
	a, b := net.Pipe()
	defer b.Close()
	s := &session{p: p, t: target{"api.test", 443}, server: a, dialed: time.Now()}
	c, err := s.dial(context.Background(), "tcp", "api.test:443")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := s.dial(ctx, "tcp", "api.test:443"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a dial past the bound: %v, want it to wait and give up", err)
	}
	// The Transport's dials are not its requests': one still waiting
	// ends with the session.
	s.done = make(chan struct{})
	ended := make(chan error, 1)
	go func() { _, err := s.dial(context.Background(), "tcp", "api.test:443"); ended <- err }()
	time.Sleep(50 * time.Millisecond)
	close(s.done)
	select {
	case err := <-ended:
		if !errors.Is(err, net.ErrClosed) {
			t.Errorf("a waiting dial at the session's end: %v, want net.ErrClosed", err)
		}
	case <-time.After(tokenWait / 2):
		t.Error("a waiting dial outlived its session")
	}
	c.Close()
	c.Close() // a second Close frees nothing more
	if len(p.upstreams) != maxUpstreams-1 {
		t.Fatalf("%d tokens held after the close, want %d", len(p.upstreams), maxUpstreams-1)
	}
}
