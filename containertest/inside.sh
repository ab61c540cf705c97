#!/bin/sh
# containertest/inside.sh: a container's side of one case of run.sh. It
# prints the container's own namespaces, runs jail with the arguments given
# and probe.sh as the command, then jail's exit status and status record.
for n in user mnt pid net ipc uts cgroup; do
	echo "outer ns $n $(readlink /proc/self/ns/$n)"
done
jail "$@" --status-json /tmp/status.json -- /bin/sh -c "$(cat /containertest/probe.sh)"
echo "jail exit $?"
cat /tmp/status.json 2>/dev/null
