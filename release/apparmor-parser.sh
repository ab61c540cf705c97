#!/usr/bin/env bash
# release/apparmor-parser.sh: makes $CACHE/apparmor_parser (default
# /var/cache/jail-apparmor), an AppArmor parser that checks a profile as
# Ubuntu 24.04 would compile it: ABI 4.0's features as the kernel's, the
# parser's own abi files, no host configuration, nothing loaded. The
# profile's syntax test (setup/apparmor_parse_test.go) and make
# test-release run it; the Makefile's testdeps make it. Prints its path.
#
# The userns rule needs AppArmor 4.0 or later: the host's apparmor when its
# release has that (Ubuntu 24.04, Debian 13), installed if missing; else
# (Debian 12 has 3.0.8, which rejects the rule) Debian's or Ubuntu's
# apparmor package of the next release, fetched with apt into the cache and
# run there with that release's C library. That leaves the host's packages
# and apt state as they were.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

CACHE=${JAIL_APPARMOR_CACHE:-/var/cache/jail-apparmor}
WRAPPER=$CACHE/apparmor_parser

# major prints the major version of the apparmor_parser command given.
major() { "$@" --version 2>/dev/null | sed -n 's/^AppArmor parser version \([0-9]*\)\..*/\1/p' | head -n1; }

# wrap writes the wrapper: the parser command given, with the options that
# make it a check for an ABI 4.0 kernel, rooted at the abi files of base.
wrap() {
	local base=$1
	shift
	mkdir -p "$CACHE"
	{
		echo '#!/bin/sh'
		echo "# Made by release/apparmor-parser.sh: apparmor_parser checking a profile as for"
		echo "# an ABI 4.0 kernel (Ubuntu 24.04), with no host configuration."
		printf 'exec'
		printf ' %q' "$@" --config-file=/dev/null --base "$base" --kernel-features="$base/abi/4.0"
		echo ' "$@"'
	} >"$WRAPPER.tmp"
	chmod 755 "$WRAPPER.tmp"
	mv "$WRAPPER.tmp" "$WRAPPER"
}

if [ -x "$WRAPPER" ] && [ "$(major "$WRAPPER")" -ge 4 ] 2>/dev/null; then
	echo "$WRAPPER"
	exit 0
fi

# The host's own, when its release has AppArmor 4.
host=$(PATH=$PATH:/usr/sbin:/sbin command -v apparmor_parser || true)
candidate=$(apt-cache policy apparmor 2>/dev/null | awk '/Candidate:/ {print $2}')
if { [ -n "$host" ] && [ "$(major "$host")" -ge 4 ]; } 2>/dev/null ||
	{ [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && dpkg --compare-versions "$candidate" ge 4.0; }; then
	apt_install apparmor
	host=$(PATH=$PATH:/usr/sbin:/sbin command -v apparmor_parser) || die "apparmor is installed but has no apparmor_parser"
	[ -f /etc/apparmor.d/abi/4.0 ] || die "the host's apparmor $(major "$host") has no /etc/apparmor.d/abi/4.0"
	wrap /etc/apparmor.d "$host"
	echo "$WRAPPER"
	exit 0
fi

# Else the next release's package, unpacked in the cache.
id=$(os_field ID)
case "$id:$(os_field VERSION_CODENAME)" in
debian:bookworm) suite=trixie ;;
ubuntu:jammy) suite=noble ;;
*) die "AppArmor 4.0 or later is needed to check jail's AppArmor profile, and this host's apparmor is ${candidate:-not available}: install apparmor 4.0 or later, or set JAIL_APPARMOR_PARSER to such an apparmor_parser" ;;
esac
say "fetching apparmor from $id $suite into $CACHE (this host's apparmor ${candidate:-none} has no userns rule)"
rm -rf "$CACHE/apt" "$CACHE/root"
mkdir -p "$CACHE/apt/lists/partial" "$CACHE/apt/cache/archives/partial" "$CACHE/root"
echo "deb [signed-by=$(archive_keyring)] $(archive_uri) $suite main" >"$CACHE/apt/sources.list"
apt=(-qq -o Dir::Etc::SourceList="$CACHE/apt/sources.list" -o Dir::Etc::SourceParts=/nonexistent
	-o Dir::State::Lists="$CACHE/apt/lists" -o Dir::Cache="$CACHE/apt/cache"
	-o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${apt[@]}" update >/dev/null || die "apt-get update of $id $suite failed"
(cd "$CACHE/apt" && apt-get "${apt[@]}" download apparmor libc6 >/dev/null) || die "apt-get download apparmor libc6 from $id $suite failed"
for deb in "$CACHE"/apt/*.deb; do dpkg-deb -x "$deb" "$CACHE/root"; done
ld=$(find "$CACHE/root" -name 'ld-linux*.so*' -path '*/lib/*' ! -path '*/lib64/*' | head -n1)
[ -n "$ld" ] || die "$suite's libc6 holds no dynamic loader"
wrap "$CACHE/root/etc/apparmor.d" "$ld" --library-path "$(dirname "$ld")" "$CACHE/root/usr/sbin/apparmor_parser"
rm -rf "$CACHE/apt"
[ "$(major "$WRAPPER")" -ge 4 ] 2>/dev/null || die "$WRAPPER does not run"
echo "$WRAPPER"
