#!/bin/sh
# bullseye-sysroot.sh DIR: make (once) a Debian 11 "bullseye" root filesystem with gcc and
# libc6-dev in DIR, for building runall against glibc 2.31. Needs root and debootstrap.
#
# The mirror comes from $DEBIAN_MIRROR, else from this machine's apt configuration (the first
# Debian, non-security archive in /etc/apt/sources.list or /etc/apt/sources.list.d/), so no
# mirror is written down in the repository. A finished sysroot is marked with .runall-sysroot;
# a half-made one (interrupted download) is thrown away and made again.
set -eu

dir=${1:?usage: bullseye-sysroot.sh DIR}
stamp="$dir/.runall-sysroot"
[ -f "$stamp" ] && exit 0

die() { echo "bullseye-sysroot: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "debootstrap needs root; run as root (or in a root container)"
command -v debootstrap >/dev/null || die "debootstrap not found; apt-get install debootstrap"

# apt_mirrors prints the archive URIs of the enabled apt sources, one a line, both formats:
# one-line "deb [opts] URI suite..." and deb822 "URIs: URI...".
apt_mirrors() {
	for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
		[ -f "$f" ] || continue
		sed -n 's/^[[:space:]]*deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}\([^[:space:]]*\).*/\2/p' "$f"
	done
	for f in /etc/apt/sources.list.d/*.sources; do
		[ -f "$f" ] || continue
		sed -n 's/^URIs:[[:space:]]*//p' "$f" | tr ' ' '\n'
	done
}

mirror=${DEBIAN_MIRROR:-}
if [ -z "$mirror" ]; then
	# A Debian archive ends in /debian; Ubuntu's or a -security one cannot serve bullseye.
	mirror=$(apt_mirrors | grep -E '/debian/?$' | head -n 1 || true)
fi
[ -n "$mirror" ] || die "no Debian mirror in the apt configuration; set DEBIAN_MIRROR to one (a URL ending in /debian)"

echo "bullseye-sysroot: debootstrap bullseye from $mirror into $dir (first time only, a few minutes)" >&2
rm -rf "$dir.tmp"
mkdir -p "$(dirname "$dir")"
debootstrap --variant=minbase --include=gcc,libc6-dev bullseye "$dir.tmp" "$mirror" >"$dir.log" 2>&1 ||
	die "debootstrap failed; see $dir.log"
# The package cache is 40 MB of .debs nobody needs again.
rm -rf "$dir.tmp/var/cache/apt/archives/"*.deb
rm -rf "$dir"
mv "$dir.tmp" "$dir"
"$dir/usr/bin/ldd" --version 2>/dev/null | head -n 1 >"$stamp" || echo bullseye >"$stamp"
echo "bullseye-sysroot: ready: $(cat "$stamp")" >&2
