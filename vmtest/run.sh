#!/usr/bin/env bash
# Run jail's cgroup v2 checks (vmtest/guest.sh) in a small VM: a stock
# Debian 6.1 kernel on the unified hierarchy under qemu (TCG), a busybox
# initramfs, and the binaries under test shared over 9p. See README.md.
#
#   bash vmtest/run.sh [JAIL_BIN]     (default: $JAIL_BIN, else bin/jail)
#   BENCH=1 bash vmtest/run.sh [JAIL_BIN]
#
# BENCH=1 runs the agent mode of `make bench` instead (agentbench.sh: jail
# beside bubblewrap, the host's, copied with its libraries), and prints its
# figures; it asserts nothing about them.
#
# Needs root (apt-get, chroot). Caches the kernel and the initramfs in
# $JAIL_VM_CACHE (default /var/cache/jail-vmtest). Exits non-zero when a
# check failed or the VM did not finish.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(dirname "$here")
jail_bin=${1:-${JAIL_BIN:-$repo/bin/jail}}
cache=${JAIL_VM_CACHE:-/var/cache/jail-vmtest}
vm_timeout=${JAIL_VM_TIMEOUT:-300}
bench=${BENCH:-}
[ -z "$bench" ] || vm_timeout=${JAIL_VM_TIMEOUT:-900}

log() { echo "vmtest: $*" >&2; }
die() {
	echo "vmtest: FAIL: $*" >&2
	exit 1
}

[ "$(id -u)" = 0 ] || die "run as root: it installs packages, builds the image in a chroot and writes $cache"

[ -x "$jail_bin" ] || die "no jail binary at $jail_bin (build it first, or pass its path)"
jail_bin=$(cd "$(dirname "$jail_bin")" && pwd)/$(basename "$jail_bin")
mkdir -p "$cache"
# One run at a time: the cache is built in place, and two TCG guests on a
# small host slow each other past their timeouts.
exec 9>"$cache/lock"
flock 9

# --- host packages ------------------------------------------------------

apt_updated=""
apt_install() {
	log "installing $*"
	if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null; then
		[ -z "$apt_updated" ] || die "apt-get install $* failed"
		apt-get update -qq || die "apt-get update failed (no apt access?): cannot install $*"
		apt_updated=1
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$@" >/dev/null ||
			die "apt-get install $* failed"
	fi
}
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" = "install ok installed" ]; }

need=()
command -v qemu-system-x86_64 >/dev/null || need+=(qemu-system-x86)
installed busybox-static || need+=(busybox-static)
command -v gcc >/dev/null || need+=(gcc libc6-dev)
command -v mkfs.ext4 >/dev/null || need+=(e2fsprogs)
[ ${#need[@]} = 0 ] || apt_install "${need[@]}"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 is still missing"
busybox=/bin/busybox
[ -x "$busybox" ] || die "no busybox-static at $busybox"

# --- kernel: Debian's generic 6.1, as an ELF vmlinux for PVH boot ------

kdir=$cache/kernel
# 9p for the share, virtio_blk and ext4 for the VM's disk (its root), tun
# for the allowlist's device.
modules="virtio virtio_ring virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache 9pnet 9pnet_virtio 9p virtio_blk crc32c_generic ext4 tun"
kernel_ok() {
	[ -s "$kdir/vmlinux" ] && [ -s "$kdir/modules/order" ] || return 1
	for m in $modules; do [ -s "$kdir/modules/$m.ko" ] || return 1; done
}
newest_kernel_pkg() {
	apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64-unsigned$' 2>/dev/null |
		awk '{print $1}' | sort -V | tail -n 1
}
if ! kernel_ok; then
	pkg=$(newest_kernel_pkg)
	if [ -z "$pkg" ] && [ -z "$apt_updated" ]; then
		apt-get update -qq || die "apt-get update failed (no apt access?)"
		apt_updated=1
		pkg=$(newest_kernel_pkg)
	fi
	[ -n "$pkg" ] || die "no linux-image-6.1.0-*-amd64-unsigned package in apt"
	log "fetching the kernel: $pkg"
	work=$(mktemp -d "$cache/kernel.tmp.XXXXXX")
	chmod 755 "$work" # apt's _apt user downloads into it
	if ! (cd "$work" && apt-get download -qq "$pkg" 2>/dev/null) &&
		! { [ -z "$apt_updated" ] && apt-get update -qq && apt_updated=1 &&
			(cd "$work" && apt-get download -qq "$pkg"); }; then
		rm -rf "$work"
		die "apt-get download $pkg failed"
	fi
	dpkg-deb -x "$work"/"$pkg"_*.deb "$work/x"
	vmlinuz=$(ls "$work"/x/boot/vmlinuz-* | head -n 1)
	kver=${vmlinuz##*/vmlinuz-}
	# The bzImage holds the kernel as an xz stream: decompress it from its
	# magic (FD 37 7A 58 5A 00) to get the ELF that qemu boots through PVH.
	python3 - "$vmlinuz" "$work/vmlinux" <<'EOF'
import lzma, sys
data = open(sys.argv[1], "rb").read()
off = data.find(b"\xfd7zXZ\x00")
if off < 0:
    sys.exit("no xz stream in " + sys.argv[1])
out = lzma.LZMADecompressor().decompress(data[off:])
if out[:4] != b"\x7fELF":
    sys.exit("the xz stream in %s is not an ELF" % sys.argv[1])
open(sys.argv[2], "wb").write(out)
EOF
	# The package has no modules.dep (depmod makes it on install): order
	# the modules, and whatever they need, from their own "depends=".
	mkdir -p "$work/modules"
	python3 - "$work/x/lib/modules/$kver" "$work/modules" $modules <<'EOF' || die "cannot collect the 9p modules from $pkg"
import os, re, shutil, sys
tree, out, want = sys.argv[1], sys.argv[2], sys.argv[3:]
path = {}
for d, _, files in os.walk(tree):
    for f in files:
        if f.endswith(".ko"):
            path[f[:-3].replace("-", "_")] = os.path.join(d, f)
order, seen = [], set()
def visit(m):
    if m in seen:
        return
    seen.add(m)
    if m not in path:
        sys.exit("module %s is not in the package" % m)
    dep = re.search(rb"depends=([^\0]*)\0", open(path[m], "rb").read())
    for d in (dep.group(1).decode().split(",") if dep else []):
        if d:
            visit(d.replace("-", "_"))
    order.append(m)
for m in want:
    visit(m)
for m in order:
    shutil.copy(path[m], os.path.join(out, m + ".ko"))
open(os.path.join(out, "order"), "w").write("\n".join(order) + "\n")
EOF
	echo "$pkg $kver" >"$work/version"
	rm -rf "$kdir" "$work/x" "$work"/*.deb
	mv "$work" "$kdir"
fi
read -r kpkg kver <"$kdir/version"

# --- initramfs: busybox, users, modules, /init ---------------------------

stamp=$(cat "$here/run.sh" "$here/init.sh" "$busybox" "$kdir/version" | sha256sum | cut -c1-16)
initrd=$cache/initramfs-$stamp.cpio.gz
if ! [ -s "$initrd" ]; then
	log "building the initramfs"
	root=$(mktemp -d "$cache/root.tmp.XXXXXX")
	chmod 755 "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,lib/modules,proc,sys,dev,tmp,run,root,mnt/host,newroot}
	cp "$busybox" "$root/bin/busybox"
	# Links made inside the tree point at /bin/busybox there, not the host's.
	for d in /bin /sbin /usr/bin /usr/sbin; do
		chroot "$root" /bin/busybox --install -s "$d"
	done
	cat >"$root/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/bin/sh
tester:x:1000:1000:tester:/tmp:/bin/sh
nobody:x:65534:65534:nobody:/nonexistent:/bin/false
EOF
	cat >"$root/etc/group" <<'EOF'
root:x:0:
tester:x:1000:
nogroup:x:65534:
EOF
	echo vmtest >"$root/etc/hostname"
	cp "$kdir"/modules/*.ko "$kdir/modules/order" "$root/lib/modules/"
	install -m 755 "$here/init.sh" "$root/init"
	(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null | gzip -1) >"$initrd.tmp"
	mv "$initrd.tmp" "$initrd"
	rm -rf "$root"
	find "$cache" -maxdepth 1 -name 'initramfs-*.cpio.gz' ! -name "${initrd##*/}" -delete
fi

# --- the share: what the guest runs -------------------------------------

tmp=$(mktemp -d /tmp/jail-vmtest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
share=$tmp/share
mkdir -m 755 "$share"
# The VM's root disk: blank, sparse, filled by /init from the initramfs.
truncate -s 1G "$tmp/disk.img"
mkfs.ext4 -q -F -L jailvm "$tmp/disk.img" || die "mkfs.ext4 failed (e2fsprogs missing?)"
cp "$jail_bin" "$share/jail"
gcc -static -O1 -o "$share/hog" "$repo/testscripts/testdata/hog.c"
cp "$here/guest.sh" "$share/guest.sh"
chmod 755 "$share/jail" "$share/hog" "$share/guest.sh"
if [ -n "$bench" ]; then
	# The bench runs in guest.sh's place: /init runs that name.
	cp "$here/agentbench.sh" "$share/guest.sh"
	gcc -static -O1 -o "$share/clock" "$here/clock.c"
	# bwrap is dynamic and the guest has no libraries: its loader, renamed
	# ld.so, runs it with --library-path.
	bwrap=$(command -v bwrap) || apt_install bubblewrap
	bwrap=$(command -v bwrap) || die "no bwrap"
	mkdir "$share/bwrap"
	cp "$bwrap" "$share/bwrap/bwrap"
	ldd "$bwrap" | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | xargs -r cp -L -t "$share/bwrap/"
	cp -L "$(ldd "$bwrap" | awk '$1 ~ /^\/.*ld-linux/ { print $1 }')" "$share/bwrap/ld.so"
	chmod 755 "$share/clock" "$share/guest.sh" "$share/bwrap"/*
fi

# --- the VM -------------------------------------------------------------

# TCG only: KVM is used only where the CPU has VT-x/AMD-V for real (a
# PVM host's /dev/kvm hangs a stock kernel).
accel=tcg
if [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo && grep -qE '^kvm_(intel|amd) ' /proc/modules; then
	accel=kvm
fi
[ -z "$bench" ] || echo "$accel" >"$share/accel"
serial=$cache/last-serial.log
rm -f "$serial"
log "booting $kpkg ($accel), guest checks run now (timeout ${vm_timeout}s)"
start=$(date +%s)
set +e
timeout --kill-after=10 "$vm_timeout" qemu-system-x86_64 \
	-accel "$accel" -M pc -m 1024 -smp 2 \
	-nodefaults -no-user-config -display none -no-reboot \
	-serial "file:$serial" \
	-device isa-debug-exit,iobase=0xf4,iosize=0x04 \
	-virtfs "local,path=$share,mount_tag=host0,security_model=none,id=host0" \
	-drive "file=$tmp/disk.img,format=raw,if=virtio,cache=unsafe" \
	-kernel "$kdir/vmlinux" -initrd "$initrd" \
	-append "console=ttyS0 quiet loglevel=0 panic=-1 cryptomgr.notests" \
	</dev/null
qemu_rc=$?
set -e
elapsed=$(($(date +%s) - start))

cp "$share/result.txt" "$cache/last-result.txt" 2>/dev/null || true
echo "================ guest result ($kver, ${elapsed}s) ================"
cat "$share/result.txt" 2>/dev/null || echo "(no result.txt)"
echo "=================================================================="
guest_rc=$(cat "$share/exitcode" 2>/dev/null || echo none)
if [ "$guest_rc" = 0 ]; then
	log "all guest checks passed (${elapsed}s)"
	exit 0
fi
if [ "$qemu_rc" = 124 ] || [ "$qemu_rc" = 137 ]; then
	log "FAIL: the VM did not finish within ${vm_timeout}s"
elif [ "$guest_rc" = none ]; then
	log "FAIL: the VM ended (qemu status $qemu_rc) before guest.sh finished"
else
	log "FAIL: guest checks failed (guest.sh exit $guest_rc)"
fi
echo "---- serial log, last 40 lines ($serial) ----"
tail -n 40 "$serial" 2>/dev/null || true
exit 1
