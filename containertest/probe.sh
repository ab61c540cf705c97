#!/bin/sh
# containertest/probe.sh: what the jail is, seen from inside it. run.sh
# passes it to jail in a container as `sh -c "$(cat probe.sh)"`; it prints
# one fact a line, which run.sh checks, and exits 7 so that the run's exit
# status is checked too.
echo "uid $(id -u)"
grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs|Seccomp):' /proc/self/status
echo "uid_map $(cat /proc/self/uid_map)"
for n in user mnt pid net ipc uts cgroup; do
	echo "jail ns $n $(readlink /proc/self/ns/$n)"
done
# Only the jail's own processes (its PID 1 is jail's), only loopback.
echo "pid1 $(cat /proc/1/comm)"
echo "procs $(find /proc -maxdepth 1 -name "[0-9]*" | wc -l)"
echo "netdevs $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' ' | tr '\n' ' ')"
# The masked /proc: no kcore, no kernel command line, /proc/sys read-only.
ls /proc/kcore 2>&1
echo "cmdline bytes $(wc -c </proc/cmdline)"
(echo x >/proc/sys/kernel/hostname) 2>/dev/null && echo "proc/sys writable" || echo "proc/sys read-only"
# No new user namespace: the filter refuses it.
unshare -U true 2>/dev/null
echo "unshare $?"
# A file in the workspace, whose owner run.sh checks on the host.
touch /workspace/made-in-jail && echo "workspace written"
exit 7
