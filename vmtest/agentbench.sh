#!/bin/sh
# The agent mode of `make bench` in the cgroup v2 VM (BENCH=1 vmtest/run.sh),
# run by the VM's /init as root (busybox ash) in place of guest.sh. Every
# launcher runs `sh -c true` once per round, each call after 150 ms idle
# (the model's thinking time), in an order drawn afresh each round; 3
# warm-up rounds are dropped, 30 are measured. Each call is timed by
# /mnt/host/clock from its fork to its exit. It prints each launcher's
# median, p95 and min, and the ratio of its median to bwrap's, all under
# the same emulation. The exit status is the number of launchers that
# failed (capped).
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
WARMUP=${WARMUP:-3}
ROUNDS=${ROUNDS:-30}
IDLE=0.15
T=/tmp/agentbench
J=$T/jail
CLOCK=$T/clock
BW=$T/bwrap
fails=0

mkdir -p $T $T/times || exit 1
cp /mnt/host/jail /mnt/host/clock $T/ && chmod 755 $J $CLOCK || {
	echo "FAIL setup: cannot copy jail and clock from /mnt/host"
	exit 1
}
ln -s jail $T/jail-sh
cp -r /mnt/host/bwrap $BW || {
	echo "FAIL setup: no bwrap in /mnt/host"
	exit 1
}

cgv=v1
grep -q '^cgroup2 /sys/fs/cgroup cgroup2 ' /proc/mounts && cgv=v2
echo "guest: kernel $(uname -r), cgroup $cgv, accel $(cat /mnt/host/accel 2>/dev/null || echo unknown)," \
	"$(nproc) vCPUs, $(free -m | awk '/Mem:/{print $2}') MiB"
echo "guest: $($J version 2>&1)"
echo "guest: bwrap $($BW/ld.so --library-path $BW $BW/bwrap --version 2>&1)"

# The workspaces: jail refuses a root caller's workspace that root owns
# (what the jail writes there would be root's), so jail's is the agent
# profile's host uid's; bwrap's stays root's, as in the host bench.
JWS=$T/jail-workspace
BWS=$T/bwrap-workspace
mkdir -p $JWS $BWS
chown 65534:65534 $JWS
chmod 700 $JWS $BWS
id=vmbench-$$

LIFT="--memory unlimited --pids unlimited --cpu unlimited"
# One launcher per line: its name, then its command line (word-split).
# bwrap gets the agent profile's isolation as far as bwrap says it (as
# bench/bwrap.go makes it): every namespace, uid and gid 1000, the
# hostname, a new session, the profile's environment, the system trees
# read-only (the guest's /etc has none of the profile's optional files),
# /proc, /dev, a tmpfs /tmp, the workspace as its working directory. Not
# expressed: seccomp, cgroup limits, rlimits, /proc masks, the generated
# /etc/passwd.
ro=""
for d in /usr /bin /sbin /lib /lib32 /lib64 /libx32; do
	[ -e $d ] && ro="$ro --ro-bind $d $d"
done
cat >$T/launchers <<LAUNCHERS
jail-workspace $J -p agent --workspace $JWS -- sh -c true
jail-session $J -p agent --session $id-session -- sh -c true
jail-sh JAIL_SESSION=$id-sh $T/jail-sh -c true
jail-nocgroup $J -p agent --workspace $JWS $LIFT -- sh -c true
session-nocgroup $J -p agent --session $id-nocg $LIFT -- sh -c true
bwrap $BW/ld.so --library-path $BW $BW/bwrap --unshare-all --unshare-user --die-with-parent --new-session --uid 1000 --gid 1000 --hostname jail --clearenv --setenv HOME /workspace --setenv LANG C.UTF-8 --setenv PATH /usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin $ro --proc /proc --dev /dev --tmpfs /tmp --bind $BWS /workspace --chdir /workspace sh -c true
LAUNCHERS
n=$(wc -l <$T/launchers)
echo "launchers (each runs sh -c true; the guest has no bash, so jail-sh runs sh -c too):"
sed 's/^/  /' $T/launchers
echo

# One check call each, its errors shown: a launcher that fails here is
# left out of the rounds.
i=0
while read -r name cmd; do
	i=$((i + 1))
	if env $cmd </dev/null >$T/check.out 2>&1; then
		echo "ok   $name"
	else
		echo "FAIL $name: exit $?"
		sed 's/^/     /' $T/check.out | head -n 15
		fails=$((fails + 1))
		touch $T/times/$i.failed
	fi
done <$T/launchers
# That the limits are on: a run's cgroup, read while it runs.
$J -p agent --workspace $JWS -- sleep 2 </dev/null >/dev/null 2>&1 &
sleep 1
echo "jail-workspace's run cgroup: $(cd /sys/fs/cgroup && ls -d jail/r* 2>/dev/null | head -n 1)," \
	"memory.max $(cat /sys/fs/cgroup/jail/r*/memory.max 2>/dev/null | head -n 1)," \
	"pids.max $(cat /sys/fs/cgroup/jail/r*/pids.max 2>/dev/null | head -n 1)"
wait
echo

# run_one I ROUND: launcher I's call, after the idle, timed.
run_one() {
	[ -e $T/times/$1.failed ] && return
	cmd=$(sed -n "$1p" $T/launchers | cut -d' ' -f2-)
	sleep $IDLE
	set -- "$1" "$2" $($CLOCK $cmd)
	if [ "$4" != 0 ]; then
		echo "FAIL $(sed -n "$1p" $T/launchers | cut -d' ' -f1): round $2 exit $4"
		touch $T/times/$1.failed
		return
	fi
	[ "$2" -gt "$WARMUP" ] && echo "$3" >>$T/times/$1
}

start=$(cut -d' ' -f1 /proc/uptime)
seed=$(($(date +%s) % 100000 + $$))
r=1
while [ $r -le $((WARMUP + ROUNDS)) ]; do
	# This round's order: 1..n shuffled.
	for i in $(awk -v n=$n -v s=$((seed + r)) 'BEGIN { srand(s); for (i = 1; i <= n; i++) print rand() " " i }' | sort -n | cut -d' ' -f2); do
		run_one $i $r
	done
	r=$((r + 1))
done
echo "$WARMUP warm-up + $ROUNDS measured rounds, ${IDLE}s idle before each call, seed $seed," \
	"$(awk -v a=$start -v b=$(cut -d' ' -f1 /proc/uptime) 'BEGIN { printf "%.0f", b - a }') s"
echo

# stats I: "median p95 min count" in ms of launcher I's samples.
stats() {
	sort -n $T/times/$1 | awk '{ v[NR] = $1 }
		END {
			if (NR == 0) { print "- - - 0"; exit }
			med = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
			p = int(NR * 0.95 + 0.999999); if (p < 1) p = 1
			printf "%.2f %.2f %.2f %d\n", med / 1e6, v[p] / 1e6, v[1] / 1e6, NR
		}'
}
bw=$(grep -n '^bwrap ' $T/launchers | cut -d: -f1)
bwmed=$( [ -s $T/times/$bw ] && stats $bw | cut -d' ' -f1)
printf '%-17s %9s %9s %9s %6s %9s\n' launcher "median ms" "p95 ms" "min ms" calls "/ bwrap"
i=0
while read -r name cmd; do
	i=$((i + 1))
	if ! [ -s $T/times/$i ]; then
		printf '%-17s %9s\n' "$name" failed
		continue
	fi
	set -- $(stats $i)
	ratio=-
	[ -n "$bwmed" ] && ratio=$(awk -v a=$1 -v b=$bwmed 'BEGIN { printf "%.2fx", a / b }')
	printf '%-17s %9s %9s %9s %6s %9s\n' "$name" "$1" "$2" "$3" "$4" "$ratio"
done <$T/launchers

for s in session sh nocg; do $J sessions rm $id-$s >/dev/null 2>&1; done
[ $fails -gt 100 ] && fails=100
exit $fails
