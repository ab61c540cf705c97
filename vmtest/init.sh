#!/bin/sh
# /init of the test VM (busybox ash, PID 1). It readies a cgroup v2 host,
# mounts the host's share over 9p, runs /mnt/host/guest.sh with its output
# to /mnt/host/result.txt and its status to /mnt/host/exitcode, then ends
# the VM. PID 1 must never exit (the kernel would panic), so nothing here
# uses set -e, and the last thing it does is wait forever.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root

say() { echo "@@ $*" >/dev/console; }

# The status goes out through the isa-debug-exit port (qemu then exits
# with (code<<1)|1); when that fails, a plain power-off.
quit() {
	sync
	umount /mnt/host 2>/dev/null
	printf "\\$(printf '%03o' "$1")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	poweroff -f
	while :; do sleep 3600; done
}

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=1777 tmpfs /tmp
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || { say "FATAL: cannot mount cgroup2"; quit 3; }
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control || { say "FATAL: cannot enable controllers"; quit 3; }
hostname vmtest
say "init: kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime)"

# In dependency order (run.sh worked it out): busybox insmod resolves none.
for m in $(cat /lib/modules/order); do
	insmod /lib/modules/$m.ko || { say "FATAL: insmod $m"; quit 3; }
done
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none host0 /mnt/host ||
	{ say "FATAL: cannot mount the 9p share"; quit 3; }

say "guest.sh starts, uptime $(cut -d' ' -f1 /proc/uptime)"
/bin/sh /mnt/host/guest.sh >/mnt/host/result.txt 2>&1 </dev/null
rc=$?
echo "$rc" >/mnt/host/exitcode
say "guest.sh exit $rc, uptime $(cut -d' ' -f1 /proc/uptime)"
[ "$rc" -gt 100 ] && rc=100
quit "$rc"
