#!/bin/sh
# release.sh OUT VERSION: build runall with cgo against glibc 2.31, so that OUT runs on any
# x86-64 Linux with glibc >= 2.31 (Ubuntu 20.04+, Debian 11+, RHEL 9+), and check that it does.
#
# How: a Debian bullseye root filesystem (scripts/bullseye-sysroot.sh, cached under .cache/)
# gets this machine's Go toolchain, module cache and source tree bind-mounted into it, and
# `go build` runs chrooted there, so cgo compiles with bullseye's gcc and links bullseye's
# glibc. The mounts live in a private mount namespace (unshare -m) and vanish with it, even
# when the build is interrupted. Modules are downloaded on the host first; inside, the build
# is offline (GOPROXY=off). Needs root (debootstrap, chroot, mount).
set -eu

out=${1:?usage: release.sh OUT VERSION}    # relative to the repository root
case $out in /*) echo "release: OUT must be relative to the repository root" >&2; exit 2 ;; esac
version=${2:?usage: release.sh OUT VERSION}
root=$(cd "$(dirname "$0")/.." && pwd)
sysroot=${RELEASE_SYSROOT:-$root/.cache/bullseye-sysroot}
gocache=${RELEASE_GOCACHE:-$root/.cache/bullseye-gocache}
glibc_max=${GLIBC_MAX:-2.31}
goroot=$(go env GOROOT)
modcache=$(go env GOMODCACHE)

die() { echo "release: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "needs root (chroot and bind mounts into the bullseye sysroot)"
command -v unshare >/dev/null || die "unshare not found (util-linux)"

"$root/scripts/bullseye-sysroot.sh" "$sysroot"
(cd "$root" && go mod download)
mkdir -p "$gocache" "$root/$(dirname "$out")"

# Inside the chroot: bullseye's gcc, the host's (statically linked) Go toolchain.
# shellcheck disable=SC2016 # expanded by the shell in the chroot, not here
build='
set -eu
export PATH=/usr/local/go/bin:/usr/bin:/bin HOME=/tmp
export GOROOT=/usr/local/go GOMODCACHE=/gomodcache GOCACHE=/gocache GOTOOLCHAIN=local
export GOPROXY=off GOFLAGS=-mod=readonly CGO_ENABLED=1 GOOS=linux GOARCH=amd64
# nvml.h (go-nvml) marks dozens of functions deprecated; gcc 10 would warn on each.
export CGO_CFLAGS="-O2 -g -Wno-deprecated-declarations"
cd /src
go build -trimpath -buildvcs=false -ldflags "-s -w -X main.version=$1" -o "$2" ./cmd/runall
"./$2" version >/dev/null    # it starts against glibc 2.31
'

# shellcheck disable=SC2016 # the script runs in the new mount namespace
BUILD=$build VERSION=$version OUT=$out.tmp unshare --mount --propagation private sh -eu -c '
	sysroot=$1; shift
	for m in "$@"; do    # SRC=DST[:ro]
		src=${m%%=*}; dst=${m#*=}; ro=
		case $dst in *:ro) dst=${dst%:ro}; ro=1 ;; esac
		mkdir -p "$sysroot$dst"
		mount --bind "$src" "$sysroot$dst"
		[ -z "$ro" ] || mount -o remount,bind,ro "$sysroot$dst"
	done
	mount -t proc proc "$sysroot/proc"
	exec chroot "$sysroot" sh -c "$BUILD" build "$VERSION" "$OUT"
' release "$sysroot" "$goroot=/usr/local/go:ro" "$modcache=/gomodcache:ro" "$gocache=/gocache" "$root=/src" \
	</dev/null || die "build in the bullseye chroot failed"

# Only a binary that passes replaces OUT.
"$root/scripts/check-glibc.sh" "$root/$out.tmp" "$glibc_max" || { rm -f "$root/$out.tmp"; exit 1; }
mv "$root/$out.tmp" "$root/$out"
