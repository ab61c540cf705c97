# shellcheck shell=bash
# release/lib.sh: what the release scripts share, sourced: the host's own
# Debian or Ubuntu archive (read from apt at run time, never written down)
# and installing the host packages a step needs when they are missing.

# say prints one line of what a release step does.
say() { printf '%s\n' "$*" >&2; }

# die prints why a step cannot go on, and stops.
die() { printf 'release: %s\n' "$*" >&2; exit 1; }

# os_field prints one field of /etc/os-release (ID, VERSION_CODENAME, ...).
os_field() { (. /etc/os-release && eval "printf '%s' \"\${$1:-}\""); }

# archive_uri prints the URI of the archive apt installs this release's
# packages from, as the host's apt sources configure it.
archive_uri() {
	local codename uri
	codename=$(os_field VERSION_CODENAME)
	uri=$(apt-get indextargets --format '$(REPO_URI)' "Release: $codename" 'Identifier: Packages' 2>/dev/null | head -n1)
	[ -n "$uri" ] || die "no apt source for $codename's packages (apt-get indextargets finds none): run apt-get update"
	printf '%s' "$uri"
}

# archive_keyring prints the keyring the distribution's archive is signed
# with.
archive_keyring() {
	local k
	k=/usr/share/keyrings/$(os_field ID)-archive-keyring.gpg
	[ -f "$k" ] || die "no $k to check the archive's signatures with"
	printf '%s' "$k"
}

# SUDO is how apt-get is run: as is for root, else through sudo.
SUDO=
[ "$(id -u)" = 0 ] || SUDO=sudo

# apt_install installs the Debian packages named that are not installed
# yet, updating the package lists only when the install fails.
apt_install() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	say "installing ${missing[*]}"
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null 2>&1 ||
		{ $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; } ||
		die "could not install ${missing[*]} with apt-get"
}
