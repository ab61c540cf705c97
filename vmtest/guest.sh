#!/bin/sh
# The cgroup v2 checks, run by the VM's /init as root (busybox ash), from
# the 9p share at /mnt/host, which also holds jail and hog. One line
# "PASS ..." or "FAIL ..." per check, with what was seen when one fails;
# the exit status is the number of failures (capped).
#
# Every check runs twice: as root, and as the unprivileged user tester in
# delegated cgroups the way systemd gives them (user@1000.service is
# emulated by /sys/fs/cgroup/deleg, and each jail invocation gets a fresh
# scope in it, as `systemd-run --user --scope -p Delegate=yes jail ...`
# would: a delegated cgroup with controllers handed down cannot take new
# processes, so one scope serves one invocation).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
CG=/sys/fs/cgroup
J=/tmp/jail
HOG=/tmp/hog
fails=0
passes=0
who=root

pass() {
	passes=$((passes + 1))
	echo "PASS [$who] $*"
}
fail() {
	fails=$((fails + 1))
	echo "FAIL [$who] $*"
}
note() { echo "     $*"; }
section() { echo "== [$who] $* (uptime $(cut -d' ' -f1 /proc/uptime))"; }

# jnum FIELD FILE: a number field of the status record.
jnum() { sed -n "s/.*\"$1\":\\(-\\{0,1\\}[0-9][0-9.]*\\).*/\\1/p" "$2" | head -n 1; }
has() { grep -q -- "$1" "$2" 2>/dev/null; }

# run NAME CMD...: runs CMD (a jail invocation, as the current caller, under
# a hard timeout), output in $W/NAME.out and $W/NAME.err, status in $rc.
run() {
	name=$1
	shift
	timeout 120 $WRAP "$@" >"$W/$name.out" 2>"$W/$name.err" </dev/null
	rc=$?
}

# show NAME [STATUSFILE]: what a failed check saw.
show() {
	note "exit $rc"
	sed -n '1,15s/^/     stdout: /p' "$W/$1.out"
	sed -n '1,15s/^/     stderr: /p' "$W/$1.err"
	[ -n "$2" ] && [ -f "$2" ] && sed 's/^/     status: /' "$2"
	note "run cgroups now: $(cd $CG && find . -type d -name 'r[0-9]*' | tr '\n' ' ')"
}

# cgroups_left: run cgroups (r*) under the caller's jail parents.
cgroups_left() {
	if [ "$who" = root ]; then
		ls -d $CG/jail/r* 2>/dev/null
	else
		ls -d $CG/deleg/*/jail/r* 2>/dev/null
	fi
}

procs_named() { ps -o args | grep -c "^$1\$"; }

# pids_argv NAME: the processes whose whole command line is NAME, from
# /proc (busybox ps shows "{comm} args" when the two differ).
pids_argv() {
	for c in /proc/[0-9]*/cmdline; do
		[ "$(tr '\0' ' ' 2>/dev/null <$c)" = "$1 " ] && echo "${c%/cmdline}" | cut -d/ -f3
	done
}

# --- setup ----------------------------------------------------------------

echo "guest: $(uname -r), $(nproc) cpus, $(free -m | awk '/Mem:/{print $2}') MiB, uptime $(cut -d' ' -f1 /proc/uptime)"
echo "guest: cgroup2: $(grep cgroup2 /proc/mounts)"
echo "guest: root controllers: $(cat $CG/cgroup.controllers); subtree_control: $(cat $CG/cgroup.subtree_control)"
echo "guest: user.max_user_namespaces=$(cat /proc/sys/user/max_user_namespaces)" \
	"kernel.unprivileged_userns_clone=$(cat /proc/sys/kernel/unprivileged_userns_clone 2>/dev/null || echo n/a)"

cp /mnt/host/jail $J && cp /mnt/host/hog $HOG && chmod 755 $J $HOG || {
	echo "FAIL setup: cannot copy jail and hog from /mnt/host"
	exit 1
}
echo "guest: $($J version 2>&1)"

# The plan cache's directories, as systemd would have them.
mkdir -p -m 700 /run/user/1000 && chown tester:tester /run/user/1000

# user@1000.service: delegated to tester (the directory and the three
# delegation files, as systemd's Delegate=yes), controllers handed down to
# it and, by its "manager", into it.
mkdir $CG/deleg
chown tester:tester $CG/deleg $CG/deleg/cgroup.procs $CG/deleg/cgroup.subtree_control $CG/deleg/cgroup.threads
su -s /bin/sh tester -c "echo '+memory +pids +cpu' > $CG/deleg/cgroup.subtree_control" ||
	echo "FAIL setup: tester cannot hand the controllers down in its delegated cgroup"
echo "guest: deleg controllers: $(cat $CG/deleg/cgroup.controllers); subtree_control: $(cat $CG/deleg/cgroup.subtree_control)"

# in-scope CMD...: CMD as tester, alone in a new delegated scope under
# deleg (systemd-run --user --scope -p Delegate=yes CMD). It execs all the
# way, so its pid is CMD's.
cat >/tmp/in-scope <<'EOF'
#!/bin/sh
n=$(cat /tmp/scope-n 2>/dev/null || echo 0)
n=$((n + 1))
echo $n >/tmp/scope-n
s=/sys/fs/cgroup/deleg/run-$n.scope
mkdir $s && chown tester:tester $s $s/cgroup.procs $s/cgroup.subtree_control $s/cgroup.threads &&
	echo $$ >$s/cgroup.procs || { echo "in-scope: cannot make or join $s" >&2; exit 99; }
if [ -f /tmp/scope-premake-jail ]; then
	mkdir $s/jail && chown tester:tester $s/jail $s/jail/cgroup.procs $s/jail/cgroup.subtree_control $s/jail/cgroup.threads ||
		{ echo "in-scope: cannot make $s/jail" >&2; exit 99; }
fi
exec su -s /bin/sh -c 'exec "$@"' -- tester sh "$@"
EOF
# as-tester CMD...: CMD as tester, where it is (no delegation).
cat >/tmp/as-tester <<'EOF'
#!/bin/sh
exec su -s /bin/sh -c 'exec "$@"' -- tester sh "$@"
EOF
chmod 755 /tmp/in-scope /tmp/as-tester

# --- the checks, per caller -------------------------------------------------

checks() {
	W=/tmp/w-$who
	mkdir -p $W
	[ "$who" = root ] || chown tester:tester $W
	cd $W

	section "jail check"
	run check $J check
	sed 's/^/     | /' $W/check.out $W/check.err
	if [ $rc = 0 ]; then pass "jail check exits 0"; else
		fail "jail check exits $rc"
		if [ "$who" != root ]; then
			s=$CG/deleg/run-$(cat /tmp/scope-n).scope
			note "its scope after: $(cd $s && find . -type d | tr '\n' ' ')subtree_control '$(cat $s/cgroup.subtree_control)'"
		fi
	fi

	section "trivial run"
	run triv $J -p default --status-json $W/triv.json -- /bin/sh -c 'echo hi; cat /proc/self/cgroup'
	if [ $rc = 0 ] && has '^hi$' $W/triv.out && has '^0::/$' $W/triv.out && has '"limits":{"cgroup":"v2"' $W/triv.json; then
		pass "trivial run: hi, 0::/, limits.cgroup v2"
	else
		fail "trivial run"
		show triv $W/triv.json
	fi

	section "fork bomb"
	run bomb $J -p default --pids 64 --status-json $W/bomb.json --ro-bind $HOG:/hog -- /hog forkloop
	if [ $rc = 137 ] && has '^jail: killed: process limit 64 reached' $W/bomb.err && has '"pids_limit_hit":true' $W/bomb.json; then
		pass "fork bomb killed at pids 64 (pids_peak $(jnum pids_peak $W/bomb.json))"
	else
		fail "fork bomb at --pids 64"
		show bomb $W/bomb.json
	fi

	# The disk limit, counted in the run's v2 cgroup: orphans' writes
	# (reaped by PID 1, which reports them) stop the run too.
	section "disk limit"
	mkdir -p $W/dws
	[ "$who" = root ] && chown 65534:65534 $W/dws
	[ "$who" = root ] || chown tester:tester $W/dws
	run disk $J -p agent --workspace $W/dws --disk 32M --status-json $W/disk.json -- \
		sh -c '(dd if=/dev/zero of=o1 bs=1M count=200 2>/dev/null &); sleep 3; echo finished'
	if [ $rc = 137 ] && has '^jail: killed: disk limit 32M reached in /workspace$' $W/disk.err &&
		has '"disk_limit_hit":true' $W/disk.json && ! has finished $W/disk.out; then
		pass "disk filler killed at --disk 32M (disk_written_bytes $(jnum disk_written_bytes $W/disk.json))"
	else
		fail "disk filler at --disk 32M"
		show disk $W/disk.json
	fi
	rm -rf $W/dws

	# on_pids_limit = "refuse": held at the limit until the time limit,
	# while the caller starts processes as usual.
	printf 'extends = "default"\n[limits]\npids = 32\non_pids_limit = "refuse"\ntime = "3s"\n' >$W/refuse.toml
	chmod 644 $W/refuse.toml
	[ "$who" = root ] || chown tester:tester $W/refuse.toml
	timeout 120 $WRAP $J -p $W/refuse.toml --status-json $W/refuse.json --ro-bind $HOG:/hog -- /hog forkloop \
		>$W/refuse.out 2>$W/refuse.err </dev/null &
	bg=$!
	sleep 1
	if [ "$who" = root ]; then
		sh -c 'n=0; for i in $(seq 20); do /bin/true && n=$((n + 1)); done; echo $n' >$W/forks.out 2>&1
	else
		/tmp/as-tester sh -c 'n=0; for i in $(seq 20); do /bin/true && n=$((n + 1)); done; echo $n' >$W/forks.out 2>&1
	fi
	wait $bg
	rc=$?
	if [ "$(cat $W/forks.out)" = 20 ]; then
		pass "the caller started 20 processes while a refused bomb ran"
	else
		fail "the caller could not start 20 processes while a refused bomb ran: $(cat $W/forks.out)"
	fi
	if [ $rc = 137 ] && has '"timed_out":true' $W/refuse.json && has '"pids_limit_hit":true' $W/refuse.json; then
		pass "refused bomb ran to its time limit (pids_peak $(jnum pids_peak $W/refuse.json))"
	else
		fail "refused bomb (on_pids_limit refuse, time 3s)"
		show refuse $W/refuse.json
	fi

	section "OOM"
	run oom $J -p default --memory 64M --status-json $W/oom.json --ro-bind $HOG:/hog -- /hog mem 200
	if [ $rc = 137 ] && has '^jail: killed: memory limit 64M exceeded' $W/oom.err && has '"oom_killed":true' $W/oom.json; then
		pass "hog mem 200 killed at --memory 64M (memory_peak_bytes $(jnum memory_peak_bytes $W/oom.json))"
	else
		fail "OOM at --memory 64M"
		show oom $W/oom.json
	fi

	section "CPU"
	run cpu $J -p default --cpu 0.5 --time-limit 2s --status-json $W/cpu.json --ro-bind $HOG:/hog -- \
		/bin/sh -c '/hog spin & /hog spin & wait'
	cpu_ms=$(awk -v u="$(jnum cpu_user_ms $W/cpu.json)" -v s="$(jnum cpu_system_ms $W/cpu.json)" 'BEGIN { printf "%d", u + s }')
	thr=$(jnum cpu_throttled_periods $W/cpu.json)
	if has '"timed_out":true' $W/cpu.json && [ "$cpu_ms" -ge 500 ] && [ "$cpu_ms" -le 1500 ] && [ "${thr:-0}" -gt 0 ]; then
		pass "2 spinners at --cpu 0.5 for 2s: ${cpu_ms} ms CPU, $thr throttled periods"
	else
		fail "CPU at --cpu 0.5 for 2s: ${cpu_ms} ms CPU (want 500-1500), throttled periods '${thr}' (want > 0)"
		show cpu $W/cpu.json
	fi

	section "cleanup"
	i=0
	bad=0
	while [ $i -lt 50 ]; do
		i=$((i + 1))
		run true $J -p default -- true
		[ $rc = 0 ] || {
			bad=$i
			break
		}
	done
	if [ $bad = 0 ]; then pass "50 runs of true"; else
		fail "run $bad of 50 of true"
		show true
	fi
	run tl $J -p default --time-limit 200ms -- sleep 100
	[ $rc = 137 ] || {
		fail "--time-limit 200ms sleep 100: exit $rc, want 137"
		show tl
	}
	run oom2 $J -p default --memory 32M --ro-bind $HOG:/hog -- /hog mem 100
	[ $rc = 137 ] || {
		fail "--memory 32M hog mem 100: exit $rc, want 137"
		show oom2
	}
	run bomb2 $J -p default --pids 16 --ro-bind $HOG:/hog -- /hog forkloop
	[ $rc = 137 ] || {
		fail "--pids 16 hog forkloop: exit $rc, want 137"
		show bomb2
	}
	timeout 120 $WRAP $J -p default -- sleep 100 >$W/victim.out 2>$W/victim.err </dev/null &
	victim=$!
	n=0
	while [ "$(procs_named 'sleep 100')" = 0 ] && [ $n -lt 100 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	if [ "$(procs_named 'sleep 100')" = 0 ]; then
		fail "jail -- sleep 100 did not start in 10s"
	fi
	kill -9 $victim
	wait $victim 2>/dev/null
	rc=$?
	[ $rc = 137 ] || fail "SIGKILLed jail: wait says $rc, want 137"
	n=0
	while [ "$(procs_named 'sleep 100')" != 0 ] && [ $n -lt 50 ]; do
		sleep 0.1
		n=$((n + 1))
	done
	left=$(cgroups_left)
	note "after the SIGKILL of jail: run cgroups left: ${left:-none}"
	for c in $left; do note "  $c: $(tr '\n' ' ' <$c/cgroup.events) procs: $(tr '\n' ' ' <$c/cgroup.procs)"; done
	run after $J -p default -- true
	[ $rc = 0 ] || {
		fail "the run after the SIGKILL: exit $rc"
		show after
	}
	if [ "$who" != root ]; then
		# The killed jail's cgroup is in its own scope, which no later
		# run sees: removing it is the scope's manager's job (systemd
		# removes a scope's cgroups when it empties). It must be empty.
		for c in $left; do
			if has 'populated 0' $c/cgroup.events; then
				rmdir $c && note "removed $c, as systemd would when its scope ends"
			else
				fail "the SIGKILLed jail's cgroup $c still holds processes: $(tr '\n' ' ' <$c/cgroup.procs)"
			fi
		done
	fi
	left=$(cgroups_left)
	sleeps=$(procs_named 'sleep 100')
	if [ -z "$left" ] && [ "$sleeps" = 0 ]; then
		pass "after 50 runs, a time-out, an OOM, a fork bomb and a SIGKILLed jail: no run cgroup, no sleep 100 left"
	else
		fail "left behind: cgroups: ${left:-none}; sleep 100 processes: $sleeps"
		ps -o pid,user,args | grep -v ' \[' | sed 's/^/     ps: /'
	fi
}

# --- root -------------------------------------------------------------------

who=root
WRAP=
checks

# --- root, v2 only: the proxy's cgroup, the sweep ------------------------------

section "allowlist proxy"
# Started on the jail's first connection, it is born in the run's cgroup
# (CLONE_INTO_CGROUP), holds none of the caller's files, and dies with a
# SIGKILLed jail.
timeout 60 $J -p default --allow x.test -- /bin/sh -c 'wget -q -O /dev/null http://x.test/; exec sleep 101' \
	>$W/px.out 2>$W/px.err </dev/null &
pxjail=$!
n=0
while [ "$(procs_named 'sleep 101')" = 0 ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
px=$(pids_argv jail-proxy | head -n 1)
pid1=$(pids_argv jail | head -n 1)
if [ -n "$px" ] && [ -n "$pid1" ] && [ "$(cat /proc/$px/cgroup)" = "$(cat /proc/$pid1/cgroup)" ] &&
	[ "$(readlink /proc/$px/fd/0)" = /dev/null ] && [ "$(readlink /proc/$px/fd/1)" = /dev/null ] &&
	[ "$(readlink /proc/$px/fd/2)" = /dev/null ]; then
	pass "the proxy runs in the run's cgroup ($(cat /proc/$px/cgroup)), stdin, stdout and stderr /dev/null"
else
	fail "the proxy (pid '$px'): cgroup '$(cat /proc/$px/cgroup 2>&1)', the jail's PID 1 (pid '$pid1') '$(cat /proc/$pid1/cgroup 2>&1)', fd 0 $(readlink /proc/$px/fd/0), fd 1 $(readlink /proc/$px/fd/1)"
	show px
fi
kill -9 $pxjail
wait $pxjail 2>/dev/null
n=0
while [ -n "$(pids_argv jail-proxy)" ] && [ $n -lt 50 ]; do
	sleep 0.1
	n=$((n + 1))
done
if [ -n "$px" ] && [ -z "$(pids_argv jail-proxy)" ]; then pass "the proxy died with its SIGKILLed jail"; else
	fail "the proxy outlived its SIGKILLed jail"
fi

section "stopped jail, frozen jail"
# SIGSTOP to jail freezes its cgroup (PID 1 does it, seeing jail stopped):
# a process that has a timer send it SIGCONT every 20 ms, which undoes a
# stop by signals, writes nothing until jail is continued.
mkdir -p $W/cw && chown tester:tester $W/cw && rm -f $W/cw/c.log
timeout 60 $J -p agent --workspace $W/cw --ro-bind $HOG:/hog -- /hog contloop /workspace/c.log >$W/cw.out 2>$W/cw.err </dev/null &
cwjail=$!
n=0
while [ ! -s $W/cw/c.log ] && [ $n -lt 100 ]; do
	sleep 0.1
	n=$((n + 1))
done
kill -STOP $cwjail
sleep 0.5
a=$(wc -l <$W/cw/c.log)
sleep 1
b=$(wc -l <$W/cw/c.log)
kill -CONT $cwjail
sleep 0.5
c=$(wc -l <$W/cw/c.log)
kill -TERM $cwjail
wait $cwjail 2>/dev/null
if [ "$a" -gt 0 ] && [ "$a" = "$b" ] && [ "$c" -gt "$b" ]; then
	pass "a stopped jail's jail stays frozen against its own SIGCONTs ($a lines before, $b after 1 s stopped, $c once continued)"
else
	fail "stopped jail: $a lines, $b after 1 s stopped (want the same), $c once continued (want more)"
	sed -n '1,5s/^/     stderr: /p' $W/cw.err
fi

section "no real-time scheduling"
# A real-time task is not held by the CPU quota: whatever the caller's
# RLIMIT_RTPRIO, the jail's is 0.
if (ulimit -r 50 && $HOG rtself) >/dev/null 2>&1; then
	run rt sh -c "ulimit -r 50 && exec $J -p default --ro-bind $HOG:/hog -- /hog rtself"
	if [ $rc = 1 ] && has 'rtself: Operation not permitted' $W/rt.err; then
		pass "a caller with RLIMIT_RTPRIO 50: its jail cannot go real-time"
	else
		fail "RLIMIT_RTPRIO 50 passed into the jail"
		show rt
	fi
else
	note "skipped: root cannot make itself real-time here"
fi

section "sweep"
# A dead runner's name (cg.h's CG_RUN_NAME): a pid that does not exist,
# with this pid and time namespace.
dead=$CG/jail/r999999999-1-$(stat -L -c %i /proc/self/ns/pid)-$(stat -L -c %i /proc/self/ns/time)
mkdir $dead
run sweep $J -p default -- true
if [ $rc = 0 ] && [ ! -d $dead ]; then pass "a dead runner's empty cgroup is swept by the next run"; else
	fail "the dead runner's cgroup $dead is still there after a run"
	rmdir $dead 2>/dev/null
fi

section "jail setup"
# The one-time host setup, for real: on v2 favordynmods does not apply
# (runs start inside their cgroup), nor does root's delegation (an
# unprivileged caller's runs go under its own cgroup, which systemd
# delegates), and this VM has no AppArmor. So it changes nothing, says so
# step by step, and a second run says the same.
host_state() {
	cat /proc/self/mountinfo
	find $CG -type d | sort
	ls -la /run /etc/apparmor.d 2>&1
}
host_state >$W/setup.before
run setup1 $J setup --user tester
rc1=$rc
run setup2 $J setup --user tester
host_state >$W/setup.after
if [ $rc1 = 0 ] && [ $rc = 0 ] && has '^favordynmods: does not apply: on cgroup v2' $W/setup1.out &&
	has '^delegation: does not apply: on cgroup v2' $W/setup1.out && has '^apparmor: does not apply' $W/setup1.out &&
	[ "$(wc -l <$W/setup1.out)" = 3 ] && ! [ -s $W/setup1.err ] && cmp -s $W/setup1.out $W/setup2.out &&
	cmp -s $W/setup.before $W/setup.after; then
	pass "jail setup on v2: every step does not apply, nothing changed, twice: $(tr '\n' '|' <$W/setup1.out | cut -c1-160)"
else
	fail "jail setup on v2 (want exit 0, three 'does not apply' lines, the same twice, the host unchanged)"
	rc2=$rc
	rc=$rc1
	show setup1
	rc=$rc2
	show setup2
	diff $W/setup.before $W/setup.after | sed 's/^/     changed: /'
fi

# --- tester, delegated --------------------------------------------------------

who=tester
WRAP=/tmp/in-scope
W=/tmp/w-tester
mkdir -p $W && chown tester:tester $W
section "a bare delegated scope"
# What systemd-run --user --scope -p Delegate=yes gives: an empty scope
# of the caller's. jail makes jail/ and jail.runner/ in it.
run bare $J -p default --status-json $W/bare.json -- /bin/sh -c 'cat /proc/self/cgroup'
if [ $rc = 0 ] && has '^0::/$' $W/bare.out; then
	pass "jail runs with limits in a bare delegated scope"
else
	fail "jail in a bare delegated scope (a fresh systemd-run --user --scope -p Delegate=yes)"
	show bare $W/bare.json
	note "the scope after the run: $(cd $CG/deleg/run-$(cat /tmp/scope-n).scope && find . -type d | tr '\n' ' ')"
	note "WORKAROUND: the tester checks below pre-make jail/ in each scope (owned by tester)"
	touch /tmp/scope-premake-jail
fi
checks
note "scopes made: $(cat /tmp/scope-n)"
# Why one scope per invocation: once jail has handed controllers down in
# a scope, the kernel lets no process join it (no internal processes).
s=$CG/deleg/run-$(cat /tmp/scope-n).scope
note "joining a used scope ($s: subtree_control '$(cat $s/cgroup.subtree_control)'): $(sh -c "echo \$\$ > $s/cgroup.procs" 2>&1 && echo joined)"

# --- tester, not delegated ------------------------------------------------------

who=tester-nodeleg
WRAP=/tmp/as-tester
W=/tmp/w-tester
section "no delegation"
# nodeleg_refused NAME: the run was refused (125), with a fix.
nodeleg_refused() {
	[ $rc = 125 ] && ! has ran $W/$1.out && { has 'systemd-run --user --scope -p Delegate=yes' $W/$1.err || has 'fix:' $W/$1.err; }
}
# The same invocation, once in a delegated scope: its plan is now cached.
timeout 120 /tmp/in-scope $J -p default --status-json $W/nodeleg.json -- /bin/sh -c 'echo ran' >/dev/null 2>&1 </dev/null
run nodeleg $J -p default --status-json $W/nodeleg.json -- /bin/sh -c 'echo ran'
if nodeleg_refused nodeleg; then
	pass "refused with 125 and a fix (its plan cached from a delegated run): $(head -n 1 $W/nodeleg.err)"
else
	fail "tester without delegation, its plan cached from a delegated run: want exit 125 and a fix"
	show nodeleg $W/nodeleg.json
fi
rm -rf /run/user/1000/jail
run nodeleg2 $J -p default --status-json $W/nodeleg2.json -- /bin/sh -c 'echo ran'
if nodeleg_refused nodeleg2; then
	pass "refused with 125 and a fix (no plan cached): $(head -n 1 $W/nodeleg2.err)"
else
	fail "tester without delegation, no plan cached: want exit 125 and a fix"
	show nodeleg2 $W/nodeleg2.json
fi
run be $J -p default --limits-mode best-effort --status-json $W/be.json -- /bin/sh -c 'echo ran'
if [ $rc = 0 ] && has '^ran$' $W/be.out && has '"cgroup":"none"' $W/be.json; then
	pass "best-effort runs without cgroup limits: $(grep -o '"limits":{[^}]*}' $W/be.json)"
else
	fail "tester without delegation, --limits-mode best-effort"
	show be $W/be.json
fi

echo
echo "guest: $passes passed, $fails failed (uptime $(cut -d' ' -f1 /proc/uptime))"
[ $fails -gt 100 ] && fails=100
exit $fails
