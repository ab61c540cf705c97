#!/usr/bin/env bash
# make demo: run commands in the agent profile, the way an agent's bash tool
# would, and show what a jailed command can and cannot reach.
set -u
JAIL=${1:-bin/jail}
ws=$(mktemp -d /tmp/jail-demo-XXXXXX)
trap 'rm -rf "$ws"' EXIT
echo 'print("hello from python in the workspace")' > "$ws/hello.py"
# As root, the workspace must belong to an unprivileged user: what the jail
# writes there becomes theirs (a root-owned one is refused).
[ "$(id -u)" = 0 ] && chown -R nobody:nogroup "$ws"
export DEMO_SECRET=sk-host-secret-do-not-leak

jailed() { "$JAIL" -p agent --workspace "$ws" -- bash -c "$1"; }
show() {
	printf '\n$ %s\n' "$1"
	jailed "$1" 2>&1 | sed 's/^/  /'
}

echo "jail demo: every command below runs in its own fresh jail (profile agent, workspace $ws)"
show 'id; hostname; pwd; python3 hello.py'
show 'ls /'
show 'cat /etc/shadow; ls /root /home'
show 'ps -e -o pid,user,comm'
show 'cat /proc/net/dev | tail -n +3 | cut -d: -f1'
show 'env | sort'
show 'touch /usr/bin/evil; echo x > /etc/hosts'
show 'echo built > artifact.txt && ls -l artifact.txt'
printf '\nOn the host, the file the jail wrote belongs to the workspace owner:\n  '
ls -l "$ws/artifact.txt"

cmd='unshare -U true; python3 -c "import os; os.chmod(\"hello.py\", 0o4755)" 2>&1 | tail -1'
printf '\n$ %s   (with --status-json)\n' "$cmd"
st="$ws/.status.json"
"$JAIL" -p agent --workspace "$ws" --status-json "$st" -- bash -c "$cmd" 2>&1 | sed 's/^/  /'
echo "The seccomp filter refused both; the status record's \"denied\" lists each call:"
grep -o '"syscall":"[a-z0-9_]*","nr":[0-9]*,"count":[0-9]*,"args":\["[^"]*"' "$st" | sed 's/^/  /'
rm -f "$st"

printf '\nLimits: every jail has its own cgroup (memory 512M, pids 256, cpu 1 core).\n'
printf '$ :(){ :|:& };:; sleep 30    (a fork bomb, with --status-json)\n'
"$JAIL" -p agent --workspace "$ws" --status-json "$st" -- bash -c ':(){ :|:& };:; sleep 30' 2>&1 | grep '^jail:' | sed 's/^/  /'
grep -o '"pids_limit_hit":[a-z]*' "$st" | sed 's/^/  /'
printf '$ python3 -c "x = bytearray(1 << 30)"    (1 GiB, with --memory 256M)\n'
"$JAIL" -p agent --workspace "$ws" --memory 256M --status-json "$st" -- python3 -c 'x = bytearray(1 << 30)' 2>&1 | grep '^jail:' | sed 's/^/  /'
grep -o '"oom_killed":[a-z]*' "$st" | sed 's/^/  /'
printf '$ yes    (an output flood, with --max-output 64)\n'
"$JAIL" -p agent --workspace "$ws" --max-output 64 --time-limit 1s -- yes 2>&1 | tail -2 | sed 's/^/  /'
rm -f "$st"

echo
echo "Checks (each must say ok):"
check() { if jailed "$2" >/dev/null 2>&1; then echo "  ok    $1"; else echo "  FAIL  $1"; fail=1; fi; }
fail=0
check "host files are absent (/etc/shadow, /root)" '! test -e /etc/shadow && ! test -e /root'
check "the host's processes are invisible" '[ "$(ls -d /proc/[0-9]* | wc -l)" -lt 8 ]'
check "no network but loopback" '[ "$(tail -n +3 /proc/net/dev | wc -l)" = 1 ]'
check "host environment variables do not leak" '! env | grep -q DEMO_SECRET'
check "system directories are read-only" '! touch /usr/x 2>/dev/null'
check "no capabilities, no_new_privs set" 'grep -q "CapEff:.0000000000000000" /proc/self/status && grep -q "NoNewPrivs:.1" /proc/self/status'
check "a new user namespace is refused (seccomp)" '! unshare -U true 2>/dev/null'
check "the workspace is writable" 'touch /workspace/ok'
exit $fail
