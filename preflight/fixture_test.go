package preflight

// Mount tables the checks are tested against: this host's shapes and a
// container's, as Docker 20.10 (runc) lays them out by default, with
// systempaths=unconfined, and under --privileged. Written from the paths
// runc masks and the flags it mounts with, not copied from a run.

import (
	"strings"
	"testing"

	"github.com/moby/sys/mountinfo"
)

// hostV1 is a Debian host on cgroup v1 (hybrid), with binfmt_misc over its
// always-empty directory in /proc.
const hostV1 = `22 27 0:21 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
23 27 0:22 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
27 1 254:1 / / rw,relatime - ext4 /dev/vda rw
31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
50 22 0:45 / /proc/sys/fs/binfmt_misc rw,relatime - autofs systemd-1 rw,fd=30
`

// dockerDefault is a container's: /proc masked (read-only binds of parts
// of it, a tmpfs over directories, /dev/null over files) and the cgroup
// hierarchies read-only.
const dockerDefault = `600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
601 600 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
602 600 0:53 / /dev rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
604 600 0:55 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
605 604 0:56 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755
606 605 0:29 /docker/c0 /sys/fs/cgroup/cpu ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu
607 605 0:30 /docker/c0 /sys/fs/cgroup/cpuacct ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuacct
608 605 0:32 /docker/c0 /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory
609 605 0:36 /docker/c0 /sys/fs/cgroup/pids ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,pids
613 601 0:52 /bus /proc/bus ro,relatime - proc proc rw
614 601 0:52 /fs /proc/fs ro,relatime - proc proc rw
615 601 0:52 /irq /proc/irq ro,relatime - proc proc rw
616 601 0:52 /sys /proc/sys ro,relatime - proc proc rw
617 601 0:52 /sysrq-trigger /proc/sysrq-trigger ro,relatime - proc proc rw
618 601 0:58 / /proc/acpi ro,relatime - tmpfs tmpfs ro
619 601 0:53 /null /proc/kcore rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
620 601 0:53 /null /proc/keys rw,nosuid - tmpfs tmpfs rw,size=65536k,mode=755
621 601 0:59 / /proc/scsi ro,relatime - tmpfs tmpfs ro
`

// dockerUnmasked is the same container with systempaths=unconfined: /proc
// whole, the cgroup hierarchies still read-only.
const dockerUnmasked = `600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
601 600 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
604 600 0:55 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
605 604 0:56 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755
608 605 0:32 /docker/c0 /sys/fs/cgroup/memory ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory
609 605 0:36 /docker/c0 /sys/fs/cgroup/pids ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,pids
610 605 0:29 /docker/c0 /sys/fs/cgroup/cpu ro,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu
`

// dockerPrivileged: --privileged, /proc whole, the hierarchies writable.
const dockerPrivileged = `600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
601 600 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
604 600 0:55 / /sys rw,nosuid,nodev,noexec,relatime - sysfs sysfs rw
605 604 0:56 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755
608 605 0:32 /docker/c0 /sys/fs/cgroup/memory rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,memory
609 605 0:36 /docker/c0 /sys/fs/cgroup/pids rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,pids
610 605 0:29 /docker/c0 /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu
`

// dockerV2 is a default container on a cgroup v2 host: cgroup2 read-only.
const dockerV2 = `600 500 0:50 / / rw,relatime - overlay overlay rw,lowerdir=/l,upperdir=/u,workdir=/w
601 600 0:52 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw
604 600 0:55 / /sys ro,nosuid,nodev,noexec,relatime - sysfs sysfs ro
605 604 0:26 / /sys/fs/cgroup ro,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate
`

// mounts parses a mount table.
func mounts(t *testing.T, table string) []*mountinfo.Info {
	t.Helper()
	m, err := mountinfo.GetMountsFromReader(strings.NewReader(table), nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
