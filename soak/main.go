// Command soak runs many jails the way an agent platform does, 8 at once,
// as root and as an unprivileged user, SIGKILLing some at random moments,
// and fails on anything they leave behind: a run cgroup, a process, a
// mount, an fd of the caller's, a half-written plan cache entry, a caller
// whose read of jail's output never ends, or an exit status the run's kind
// cannot end with. It prints its figures.
//
// Usage (as root, from the module root, after building the jail binary):
//
//	go run ./soak -jail ./bin/jail [-runs 2000] [-unpriv-runs 2000] [-parallel 8] [-kill 0.05] [-seed N]
//
// `make soak` runs it; it is not part of `make test`.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/jail-sandbox/jail/internal/stats"
)

type config struct {
	jail     string
	runs     int
	unpriv   int
	parallel int
	killRate float64
	seed     int64
	only     string
}

func main() {
	var c config
	flag.StringVar(&c.jail, "jail", "./bin/jail", "the jail `binary` under test")
	flag.IntVar(&c.runs, "runs", 2000, "runs as root")
	flag.IntVar(&c.unpriv, "unpriv-runs", 2000, "runs as the unprivileged user "+unprivUser+" (cgroup v1 hosts)")
	flag.IntVar(&c.parallel, "parallel", 8, "runs at once")
	flag.Float64Var(&c.killRate, "kill", 0.05, "share of runs SIGKILLed 1-50 ms after their start")
	flag.Int64Var(&c.seed, "seed", time.Now().UnixNano(), "random seed (printed, to repeat a run)")
	flag.StringVar(&c.only, "only", "", "run only the kinds `K1,K2` (e.g. allow-killed, to chase the proxy's races)")
	flag.Parse()
	if err := run(c, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "soak:", err)
		os.Exit(1)
	}
}

// phase is one caller's share of the runs.
type phase struct {
	who  caller
	runs int
	env  *env
	// noTUN: the caller may not open /dev/net/tun, so it runs no
	// allowlist jails (they exit 125, saying why).
	noTUN bool
}

func run(c config, w io.Writer) error {
	for _, k := range strings.Split(c.only, ",") {
		if k != "" && !slices.ContainsFunc(kinds(), func(x kind) bool { return x.name == k }) {
			return fmt.Errorf("-only: no kind %q", k)
		}
	}
	if os.Geteuid() != 0 {
		return errors.New("run as root: the soak runs jails as root and as an unprivileged user it creates")
	}
	bin, err := filepath.Abs(c.jail)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "soak-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	port, stop, err := serveHTTP()
	if err != nil {
		return err
	}
	defer stop()

	unpriv, undo, err := unprivileged()
	defer undo()
	if err != nil {
		return err
	}
	root := caller{name: "root"}
	phases := []phase{{who: root, runs: c.runs}}
	if c.unpriv > 0 && isCgroup2() {
		fmt.Fprintln(w, "unprivileged runs skipped: cgroup v2 delegation is a systemd scope (make test-cgroup2 covers it)")
	} else if c.unpriv > 0 {
		phases = append(phases, phase{who: unpriv, runs: c.unpriv, noTUN: !tunOpenTo(unpriv)})
		if phases[len(phases)-1].noTUN {
			fmt.Fprintln(w, "unprivileged allowlist runs skipped: /dev/net/tun is not open to "+unpriv.name+" (jail check says so, and the run exits 125 with the fix)")
		}
	}
	plans := []string{"/run/jail/plans"}
	for i := range phases {
		p := &phases[i]
		if p.env, err = newEnv(work, bin, port, p.who, unpriv, c.parallel); err != nil {
			return err
		}
		if p.who.cred != nil {
			plans = append(plans, filepath.Join(work, "run-"+p.who.name, "jail", "plans"))
		}
	}

	fmt.Fprintf(w, "soak: %s, seed %d, %d at once, %.0f%% SIGKILLed 1-50 ms after start\n", bin, c.seed, c.parallel, c.killRate*100)
	before := take(bin, plans)
	rnd := rand.New(rand.NewSource(c.seed))
	var all []outcome
	for _, p := range phases {
		start := time.Now()
		outs := runPhase(p, c, rnd.Int63())
		fmt.Fprintf(w, "\n%s: %d runs in %.1f s\n", p.who.name, len(outs), time.Since(start).Seconds())
		report(w, outs)
		all = append(all, outs...)
	}
	// Killed runs' jails die with them; the next run of each caller sweeps
	// the cgroups they could not remove.
	time.Sleep(time.Second)
	for _, p := range phases {
		if o := runOne(p.env, kinds()[0], 0, 0); o.bad != "" {
			return fmt.Errorf("the sweeping run as %s: %s", p.who.name, o.bad)
		}
	}
	after := take(bin, plans)
	var problems []string
	for _, o := range all {
		switch {
		case o.hung:
			problems = append(problems, fmt.Sprintf("hung caller: %s (killed %v): its output stayed open %v after jail ended", o.kind, o.killed, hangAfter))
		case o.bad != "":
			problems = append(problems, fmt.Sprintf("%s (killed %v): %s", o.kind, o.killed, o.bad))
		}
	}
	problems = append(problems, leaks(before, after)...)
	fmt.Fprintf(w, "\nleft behind: cgroups %d -> %d, jail processes %d -> %d, mountinfo %d -> %d lines, caller fds %d -> %d\n",
		len(before.cgroups), len(after.cgroups), len(before.procs), len(after.procs), before.mounts, after.mounts, before.fds, after.fds)
	if len(problems) > 0 {
		sort.Strings(problems)
		for _, p := range problems {
			fmt.Fprintln(w, "FAIL", p)
		}
		return fmt.Errorf("%d problems", len(problems))
	}
	fmt.Fprintln(w, "ok: nothing left behind, no hung caller, every exit status one its kind may end with")
	return nil
}

// newEnv prepares a caller's workspaces, session state and plan cache.
func newEnv(work, bin string, port int, who, owner caller, parallel int) (*env, error) {
	e := &env{jail: bin, httpPort: port, cred: who.cred, sessions: "soak-" + who.name + "-"}
	base := filepath.Join(work, who.name)
	if err := ownedDir(base, 0o755, owner); err != nil {
		return nil, err
	}
	for i := 0; i < parallel; i++ {
		// Writable binds are never root's: the unprivileged user owns
		// them, for root's jails too.
		ws := filepath.Join(base, fmt.Sprintf("ws%d", i))
		if err := ownedDir(ws, 0o755, owner); err != nil {
			return nil, err
		}
		e.workspaces = append(e.workspaces, ws)
	}
	state := filepath.Join(base, "state")
	if err := ownedDir(state, 0o700, who); err != nil {
		return nil, err
	}
	e.environ = []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + base, "JAIL_STATE_DIR=" + state}
	if who.cred != nil {
		rt := filepath.Join(work, "run-"+who.name)
		if err := ownedDir(rt, 0o700, who); err != nil {
			return nil, err
		}
		e.environ = append(e.environ, "XDG_RUNTIME_DIR="+rt)
	}
	return e, nil
}

// runPhase runs p.runs jails, c.parallel at once.
func runPhase(p phase, c config, seed int64) []outcome {
	ks := kinds()
	if p.noTUN {
		ks = slices.DeleteFunc(ks, func(k kind) bool { return strings.HasPrefix(k.name, "allow") })
	}
	if c.only != "" {
		ks = slices.DeleteFunc(ks, func(k kind) bool { return !slices.Contains(strings.Split(c.only, ","), k.name) })
	}
	outs := make([]outcome, p.runs)
	next := make(chan int)
	var wg sync.WaitGroup
	for wkr := 0; wkr < c.parallel; wkr++ {
		wg.Add(1)
		rnd := rand.New(rand.NewSource(seed + int64(wkr)))
		go func() {
			defer wg.Done()
			for i := range next {
				k := pick(ks, rnd)
				var killAt time.Duration
				switch {
				case k.killAfter[1] > 0:
					killAt = k.killAfter[0] + time.Duration(rnd.Int63n(int64(k.killAfter[1]-k.killAfter[0])))
				case rnd.Float64() < c.killRate:
					killAt = time.Millisecond + time.Duration(rnd.Int63n(int64(49*time.Millisecond)))
				}
				outs[i] = runOne(p.env, k, wkr, killAt)
			}
		}()
	}
	for i := 0; i < p.runs; i++ {
		next <- i
	}
	close(next)
	wg.Wait()
	return outs
}

// report prints, per kind, the runs, their exit statuses and durations.
func report(w io.Writer, outs []outcome) {
	byKind := map[string][]outcome{}
	for _, o := range outs {
		name := o.kind
		if o.killed {
			name = "KILL:" + name
		}
		byKind[name] = append(byKind[name], o)
	}
	names := make([]string, 0, len(byKind))
	for n := range byKind {
		names = append(names, n)
	}
	sort.Strings(names)
	fmt.Fprintf(w, "  %-20s %5s  %-26s %8s %8s %8s\n", "kind", "runs", "exit statuses", "p50 ms", "p95 ms", "max ms")
	for _, n := range names {
		codes := map[int]int{}
		var took []time.Duration
		for _, o := range byKind[n] {
			codes[o.code]++
			took = append(took, o.took)
		}
		keys := make([]int, 0, len(codes))
		for k := range codes {
			keys = append(keys, k)
		}
		sort.Ints(keys)
		var cs []string
		for _, k := range keys {
			cs = append(cs, fmt.Sprintf("%d:%d", k, codes[k]))
		}
		s := stats.Summarize(took)
		fmt.Fprintf(w, "  %-20s %5d  %-26s %8.1f %8.1f %8.1f\n", n, len(byKind[n]), strings.Join(cs, " "), s.Median, s.P95, s.Max)
	}
}

// serveHTTP serves the allowlist runs' destination on the host's loopback.
func serveHTTP() (port int, stop func(), err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, nil, err
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok\n") })}
	go srv.Serve(ln)
	return ln.Addr().(*net.TCPAddr).Port, func() { srv.Close() }, nil
}
