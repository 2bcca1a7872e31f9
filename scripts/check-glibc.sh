#!/bin/sh
# check-glibc.sh BINARY MAXVER: fail when BINARY needs a glibc symbol version above MAXVER
# (e.g. 2.31), i.e. when it would not start on a system with that glibc. Prints the highest
# GLIBC_x.y the binary references. Uses objdump -T, or readelf when objdump is missing.
set -eu

usage="usage: check-glibc.sh BINARY MAXVER"
bin=${1:?$usage}
max=${2:?$usage}
[ -f "$bin" ] || { echo "check-glibc: $bin: no such file" >&2; exit 1; }

if command -v objdump >/dev/null; then
	syms=$(objdump -T "$bin" 2>/dev/null || true)
elif command -v readelf >/dev/null; then
	syms=$(readelf -W --dyn-syms "$bin" 2>/dev/null || true)
else
	echo "check-glibc: need objdump or readelf (binutils)" >&2
	exit 1
fi

# The version tag of each dynamic symbol, e.g. GLIBC_2.2.5; GLIBC_PRIVATE is not a release.
versions=$(printf '%s\n' "$syms" | grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/^GLIBC_//' | sort -u -V)
if [ -z "$versions" ]; then
	echo "$bin: no versioned glibc symbols (static, or not linked against glibc): ok"
	exit 0
fi
need=$(printf '%s\n' "$versions" | tail -n 1)

# Versions above the ceiling sort after it; the ceiling itself need not occur in the binary.
too_new=$(printf '%s\n' "$versions" | while read -r v; do
	[ "$(printf '%s\n%s\n' "$v" "$max" | sort -V | tail -n 1)" = "$max" ] || echo "$v"
done)
if [ -n "$too_new" ]; then
	echo "$bin: needs GLIBC_$need, above the ceiling GLIBC_$max; symbols too new:" >&2
	for v in $too_new; do
		printf '%s\n' "$syms" | grep -F "GLIBC_$v" | grep -E "GLIBC_$(echo "$v" | sed 's/\./\\./g')([^0-9.]|$)" |
			awk -v v="$v" '{ print "  GLIBC_" v "  " $NF }'
	done >&2
	exit 1
fi
echo "$bin: needs GLIBC_$need, within GLIBC_$max: ok"
