package testscripts

// The ways a run ends that TestStatusRecord (status_golden_test.go) runs.

import (
	"bytes"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/jail-sandbox/jail/jail"
)

// endings is every way a run ends. dir holds the profiles and files they
// use; port is a local HTTP server's, which the allowlist lets through,
// tlsPort an HTTPS server's for example.com.
func endings(dir, port, tlsPort string) []ending {
	hog := "--ro-bind=" + filepath.Join(s.binDir, "hog") + ":/hog"
	needCurl := func() string {
		if _, err := exec.LookPath("curl"); err != nil {
			return "needs curl on the host"
		}
		return ""
	}
	asTester := func() string {
		if s.unpriv == nil {
			return "runs as the unprivileged user, which the suite makes only as root"
		}
		if _, err := os.Stat("/sys/fs/cgroup/pids/cgroup.procs"); err != nil {
			return "written for a cgroup v1 host, as limits/fail_closed.txtar"
		}
		return ""
	}
	return []ending{
		{name: "exit 0", flags: []string{"-p", "default"}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.Signal == 0 && !c.verdict() && c.st.Error == "", "a clean exit, no verdict, no error")
				// This test's own path: root (with CAP_SYS_ADMIN, as
				// the suite runs) or an unprivileged caller's.
				u := c.st.UserNS
				if os.Geteuid() == 0 {
					c.want(u.Path == "root" && u.HostUID == 65534 && u.HostGID == 65534, "userns: the root path, as 65534")
				} else {
					c.want(u.Path == "unprivileged" && int(u.HostUID) == os.Geteuid() && int(u.HostGID) == os.Getegid(), "userns: the caller, unprivileged")
				}
				c.want(c.st.Network == "none" && c.st.Seccomp == "default" && len(c.st.Denied) == 0, "network none, policy default, nothing denied")
				c.want(c.st.Limits.Cgroup != "none" && c.st.Limits.Memory == 512<<20 && c.st.Limits.Pids == 256, "default's limits in a cgroup")
				c.lacks("signal_name", "output_dropped", "output_closed", "secrets", "seccomp_reported", "error")
				c.want(len(c.st.NetworkDenied) == 0 && len(c.st.NetworkAllowed) == 0, "nothing refused or let through")
			}},
		{name: "network none, a lookup refused", flags: []string{"-p", "default"}, argv: []string{"getent", "hosts", "example.com"}, code: 2,
			check: func(c *checker) {
				d := c.st.NetworkDenied
				c.want(len(d) == 1 && d[0].Host == "example.com" && d[0].Port == 0 && d[0].Count >= 1 && d[0].Kind == "lookup" &&
					d[0].Reason == "network is off in this jail", "network_denied: the lookup of example.com, network off")
			}},
		{name: "a replayed plan", flags: []string{"-p", "default"}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.PlanCached && !c.st.SeccompCompiled, "plan_cached, and nothing compiled")
			}},
		{name: "exit non-zero", flags: []string{"-p", "default"}, argv: []string{"sh", "-c", "exit 3"}, code: 3,
			check: func(c *checker) { c.want(c.st.Signal == 0 && !c.verdict(), "exit 3, no signal, no verdict") }},
		{name: "killed by a signal", flags: []string{"-p", "default"}, argv: []string{"sh", "-c", "kill -TERM $$"}, code: 143,
			check: func(c *checker) {
				c.want(c.st.Signal == 15 && c.st.SignalName == "SIGTERM" && !c.verdict(), "SIGTERM, no verdict")
			}},
		{name: "time limit", flags: []string{"-p", "default", "--time-limit", "1s"}, argv: []string{"sleep", "60"}, code: 137,
			check: func(c *checker) {
				c.want(c.st.TimedOut && c.st.SignalName == "SIGKILL", "timed_out, SIGKILL")
				c.want(c.st.WallMS >= 1000 && c.st.WallMS < 30000, "wall_ms about the limit")
			}},
		{name: "OOM", flags: []string{"-p", "default", "--memory", "64M", hog}, argv: []string{"/hog", "mem", "200"}, code: 137,
			check: func(c *checker) {
				c.want(c.st.OOMKilled && c.st.OOMKills != nil && *c.st.OOMKills >= 1, "oom_killed, oom_kills >= 1")
				c.want(c.st.Limits.Memory == 64<<20, "limits.memory 64M")
				c.has("memory_peak_bytes", "pids_peak", "cpu_throttled_periods")
			}},
		{name: "pids limit, kill", flags: []string{"-p", "default", "--pids", "16", hog}, argv: []string{"/hog", "forkloop"}, code: 137,
			check: func(c *checker) {
				c.want(c.st.PidsLimitHit && !c.st.TimedOut && c.st.Limits.Pids == 16, "pids_limit_hit at 16, not timed out")
			}},
		{name: "pids limit, refuse", flags: []string{"-p", filepath.Join(dir, "refuse.toml"), "--pids", "8", "--time-limit", "10s"},
			argv: []string{"sh", "-c", "for i in 1 2 3 4 5 6 7 8 9 10; do sleep 5 & done; exit 0"}, code: 2,
			check: func(c *checker) {
				c.want(c.st.PidsLimitHit && !c.st.TimedOut && c.st.Signal == 0, "pids_limit_hit, the run went on to its own exit")
			}},
		{name: "CPU time limit", flags: []string{"-p", filepath.Join(dir, "cputime.toml"), hog}, argv: []string{"/hog", "spin"}, code: 152,
			check: func(c *checker) {
				c.want(c.st.CPUTimeExceeded && c.st.SignalName == "SIGXCPU", "cpu_time_exceeded, SIGXCPU")
			}},
		{name: "disk limit, in a session", flags: []string{"-p", filepath.Join(dir, "sessdisk.toml"), "--session", "golden", "--disk", "16M"},
			env:  []string{"JAIL_STATE_DIR=" + filepath.Join(dir, "state")},
			argv: []string{"dd", "if=/dev/zero", "of=fill", "bs=1M", "count=1024"}, code: 137,
			check: func(c *checker) {
				c.want(c.st.DiskLimitHit && !c.st.DiskReserveHit && c.st.Limits.Disk == 16<<20 && c.st.Limits.SessionDisk == 1<<30,
					"disk_limit_hit at 16M, the session's limit 1G")
				c.want(c.st.DiskWrittenBytes != nil && *c.st.DiskWrittenBytes > 16<<20, "disk_written_bytes past 16M")
				c.want(c.st.SessionDiskBytes != nil && *c.st.SessionDiskBytes >= *c.st.DiskWrittenBytes, "session_disk_bytes counts the run")
				c.has("disk_written_bytes", "session_disk_bytes")
			}},
		{name: "file size limit", flags: []string{"-p", filepath.Join(dir, "fsize.toml")},
			argv: []string{"sh", "-c", "exec head -c 2M /dev/zero > /tmp/big"}, code: 153,
			check: func(c *checker) { c.want(c.st.FileTooLarge && c.st.SignalName == "SIGXFSZ", "file_too_large, SIGXFSZ") }},
		{name: "output cap, truncated", flags: []string{"-p", "default", "--max-output", "1K"},
			argv: []string{"head", "-c", "100000", "/dev/zero"}, code: 0,
			check: func(c *checker) {
				d, cl := c.st.OutputDropped, c.st.OutputClosed
				c.want(c.st.OutputTruncated && d != nil && *d == jail.OutputDropped{Stdout: 100000 - 1024}, "output_truncated, 98976 bytes of stdout dropped")
				c.want(cl != nil && !cl.Stdout && !cl.Stderr && c.st.Limits.MaxOutput == 1024, "no end closed, limits.max_output 1024")
			}},
		{name: "output cap, reader closed", flags: []string{"-p", "default", "--max-output", "1M", "--time-limit", "20s"},
			argv: []string{"yes"}, code: 141,
			stdout: func(r io.Reader) { io.ReadFull(r, make([]byte, 10)) },
			check: func(c *checker) {
				cl := c.st.OutputClosed
				c.want(c.st.SignalName == "SIGPIPE" && !c.st.TimedOut && cl != nil && cl.Stdout && !cl.Stderr, "SIGPIPE, output_closed.stdout")
			}},
		{name: "seccomp denial", flags: []string{"-p", "default"}, argv: []string{"sh", "-c", "unshare -U true; exit 0"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.Seccomp == "default" && !c.st.SeccompAudit && c.st.SeccompReported == nil, "policy default, enforcing, reported")
				c.want(len(c.st.Denied) == 1 && c.st.Denied[0].Syscall == "unshare" && c.st.Denied[0].Nr > 0 && c.st.Denied[0].Count == 1 &&
					c.st.Denied[0].Args[0] == "0x10000000", "denied: unshare(CLONE_NEWUSER) once")
			}},
		{name: "seccomp audit", flags: []string{"-p", "default", "--seccomp-audit"}, argv: []string{"sh", "-c", "unshare -U true; exit 0"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.SeccompAudit && len(c.st.Denied) == 1 && c.st.Denied[0].Syscall == "unshare", "seccomp_audit, unshare let through and reported")
			}},
		{name: "seccomp unreported", flags: []string{"-p", "container"}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.Seccomp == "container" && c.st.SeccompReported != nil && !*c.st.SeccompReported, "seccomp_reported false")
			}},
		{name: "no seccomp filter", flags: []string{"-p", "default", "--seccomp", "none"}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				c.want(c.st.Seccomp == "none" && !c.st.SeccompCompiled && len(c.st.Denied) == 0, "seccomp none, nothing compiled or denied")
			}},
		{name: "network allowlist", skip: needCurl,
			flags: []string{"-p", "default", "--allow", "api.test:" + port, "--pin-host", "api.test=127.0.0.1"},
			argv:  []string{"sh", "-c", "curl -sS -m 10 http://api.test:" + port + "/ && curl -sS -f -m 10 http://not-listed.test/"}, code: 22,
			check: func(c *checker) {
				c.want(c.st.Network == "allowlist", "network allowlist")
				c.want(slices.Equal(c.st.NetworkDenied, []jail.HostDenial{{Host: "not-listed.test", Port: 80, Count: 1, Reason: "not on the allowlist", Kind: "tcp"}}),
					"network_denied: not-listed.test:80, not on the allowlist")
				p, _ := strconv.Atoi(port)
				a := c.st.NetworkAllowed
				c.want(len(a) == 1 && a[0].Host == "api.test" && int(a[0].Port) == p && a[0].Connections == 1 && a[0].BytesIn > 0 && a[0].BytesOut > 0,
					"network_allowed: one connection to api.test, bytes both ways")
			}},
		{name: "secrets", flags: []string{"-p", "default", "--secrets", filepath.Join(dir, "secrets.env")}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				c.want(len(c.st.Secrets) == 2 && c.st.Secrets["GOLDEN_KEY"] == "***" && c.st.Secrets["OTHER"] == "***", "secrets: both keys, ***")
				c.want(!bytes.Contains(c.raw, []byte("golden-value")), "no secret value")
			}},
		{name: "credential bound", skip: needCurl,
			flags: []string{"-p", filepath.Join(dir, "cred.toml"), "--allow", "example.com:" + tlsPort, "--allow", "api.test:" + port,
				"--pin-host", "example.com=127.0.0.1", "--pin-host", "api.test=127.0.0.1",
				"--secrets", filepath.Join(dir, "secrets.env"), "--credential", "GOLDEN_KEY@example.com"},
			argv: []string{"sh", "-c", `curl -sS -m 10 -H "x-key: $GOLDEN_KEY" https://example.com:` + tlsPort + `/ && ` +
				`curl -sS -m 10 --proxy http://127.0.0.1:3128 -H "x-key: $GOLDEN_KEY" http://api.test:` + port + `/`},
			code: 0,
			check: func(c *checker) {
				c.want(len(c.st.Credentials) == 1 && c.st.Credentials[0].Env == "GOLDEN_KEY" && slices.Equal(c.st.Credentials[0].Hosts, []string{"example.com"}) &&
					c.st.Credentials[0].Header == "x-key", "credentials: GOLDEN_KEY to example.com, header x-key")
				c.want(strings.HasPrefix(c.st.CredentialCA, "sha256:"), "credential_ca")
				c.want(len(c.st.Secrets) == 1 && c.st.Secrets["OTHER"] == "***", "secrets: the unbound key only")
				u := c.st.CredentialUse
				c.want(len(u) == 1 && u[0].Env == "GOLDEN_KEY" && u[0].Host == "example.com" && u[0].Requests == 1 && u[0].BytesDown > 0,
					"credential_use: one request to example.com")
				c.want(slices.Equal(c.st.CredentialMisuse, []jail.CredentialMisuse{{Env: "GOLDEN_KEY", Host: "api.test", Requests: 1}}),
					"credential_misuse: the placeholder to api.test")
				c.want(!bytes.Contains(c.raw, []byte("golden-value")) && !bytes.Contains(c.raw, []byte("jail-placeholder-")), "no value or placeholder")
			}},
		{name: "best-effort limits", skip: asTester, as: s.unpriv,
			flags: []string{"-p", filepath.Join(dir, "nodeleg.toml"), "--limits-mode", "best-effort"}, argv: []string{"true"}, code: 0,
			check: func(c *checker) {
				l := c.st.Limits
				c.want(l.Cgroup == "none" && l.Why != "" && slices.Contains(l.NotEnforced, "cpu"), "no cgroup, why_not, cpu not enforced")
				c.want(c.st.UserNS.Path == "unprivileged" && strconv.Itoa(int(c.st.UserNS.HostUID)) == s.unpriv.Uid, "userns: the unprivileged caller")
				c.lacks("oom_kills", "memory_peak_bytes", "pids_peak", "cpu_throttled_periods")
			}},
		{name: "exec failure", flags: []string{"-p", "default"}, argv: []string{"/no/such/command"}, code: 127,
			check: func(c *checker) { c.want(strings.Contains(c.st.Error, "/no/such/command"), "error names the command") }},
		{name: "jail error in the runner", flags: []string{"-p", "default", "--cwd", "/no/such/dir"}, argv: []string{"true"}, code: 125,
			check: func(c *checker) {
				c.want(strings.Contains(c.st.Error, "working directory /no/such/dir"), "error names the directory")
			}},
		{name: "jail error in Go: bind source", flags: []string{"-p", "default", "--bind", "/no/such/src"}, argv: []string{"true"}, code: 125, goSide: true,
			check: func(c *checker) {
				c.want(c.st.Profile == "default" && strings.Contains(c.st.Error, "/no/such/src"), "profile default, error names the source")
			}},
		{name: "jail error in Go: bad profile", flags: []string{"-p", "no-such-profile"}, argv: []string{"true"}, code: 125, goSide: true,
			check: func(c *checker) {
				c.want(c.st.Profile == "" && c.st.ProfileHash == "" && strings.Contains(c.st.Error, `no profile "no-such-profile"`), "no profile, error says so")
			}},
	}
}
