#!/bin/sh
# /init of the test VM (busybox ash, PID 1), in two stages.
#
# Stage 1 (in the initramfs): load the modules, copy this tree onto the
# VM's disk (a blank ext4 that run.sh makes per run) and switch_root to it.
# The initramfs itself cannot be the root: pivot_root(2) refuses a root on
# rootfs (EINVAL), and tmpfs has no idmapped mounts before Linux 6.3; a
# real host's / and /tmp are a disk filesystem.
#
# Stage 2 (on the disk): ready a cgroup v2 host, mount the host's share
# over 9p, run /mnt/host/guest.sh with its output to /mnt/host/result.txt
# and its status to /mnt/host/exitcode, then end the VM.
#
# PID 1 must never exit (the kernel would panic), so nothing here uses
# set -e, and every way out ends the VM and then waits forever.
export PATH=/bin:/sbin:/usr/bin:/usr/sbin
export HOME=/root

say() { echo "@@ $*" >/dev/console; }
uptime_s() { cut -d' ' -f1 /proc/uptime; }

# The status goes out through the isa-debug-exit port (qemu then exits
# with (code<<1)|1); when that fails, a plain power-off.
quit() {
	sync
	umount /mnt/host 2>/dev/null
	printf "\\$(printf '%03o' "$1")" | dd of=/dev/port bs=1 seek=244 count=1 2>/dev/null
	poweroff -f
	while :; do sleep 3600; done
}

if [ "$1" != stage2 ]; then
	mount -t proc proc /proc
	mount -t sysfs sysfs /sys
	mount -t devtmpfs devtmpfs /dev
	say "init: kernel $(uname -r), uptime $(uptime_s)"
	# In dependency order (run.sh worked it out): busybox insmod resolves none.
	for m in $(cat /lib/modules/order); do
		insmod /lib/modules/$m.ko || { say "FATAL: insmod $m"; quit 3; }
	done
	n=0
	while ! [ -b /dev/vda ] && [ $n -lt 50 ]; do sleep 0.1; n=$((n + 1)); done
	mkdir -p /newroot
	mount -t ext4 /dev/vda /newroot || { say "FATAL: cannot mount /dev/vda"; quit 3; }
	cp -a /bin /sbin /usr /etc /lib /root /init /newroot/ || { say "FATAL: cannot copy the root"; quit 3; }
	mkdir -p /newroot/proc /newroot/sys /newroot/dev /newroot/tmp /newroot/run /newroot/mnt/host
	chmod 1777 /newroot/tmp
	umount /proc /sys /dev
	exec switch_root /newroot /init stage2
	say "FATAL: switch_root"
	mount -t proc proc /proc
	quit 3
fi

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mkdir -p /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts
mount -t tmpfs -o mode=1777 tmpfs /dev/shm
mount -t tmpfs -o mode=0755 tmpfs /run
mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup || { say "FATAL: cannot mount cgroup2"; quit 3; }
echo "+memory +pids +cpu" >/sys/fs/cgroup/cgroup.subtree_control || { say "FATAL: cannot enable controllers"; quit 3; }
hostname vmtest
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,cache=none host0 /mnt/host ||
	{ say "FATAL: cannot mount the 9p share"; quit 3; }

say "guest.sh starts, uptime $(uptime_s)"
/bin/sh /mnt/host/guest.sh >/mnt/host/result.txt 2>&1 </dev/null
rc=$?
echo "$rc" >/mnt/host/exitcode
say "guest.sh exit $rc, uptime $(uptime_s)"
[ "$rc" -gt 100 ] && rc=100
quit "$rc"
