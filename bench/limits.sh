#!/usr/bin/env bash
# Hardening benchmark (docs/benchmarks.md): `runall check` on matrices of 99,000 trials (just
# under the default max-tasks), 10^6 and 10^8, and SIGTERM during a long check: seconds to exit, exit
# code and peak RSS. With PEER set to an older runall (one without max-tasks), the same
# runs of it side by side, under a memory limit (PEER_MEM_KB, default 4 GiB) and a time
# limit (PEER_TIMEOUT, default 120 s) so that the 10^8 case cannot take the machine.
#
#   RUNALL=./runall PEER=/tmp/runall-old bench/limits.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
PEER=${PEER:-}
PEER_MEM_KB=${PEER_MEM_KB:-4194304}
PEER_TIMEOUT=${PEER_TIMEOUT:-120}
. "$(dirname "$0")/need.sh"
need bc seq timeout pgrep tail head tr mktemp "$RUNALL" ${PEER:+"$PEER"}
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# matrix FILE N1 N2 ...: a sweep whose matrix has one key per N, of N values each.
matrix() {
  local file=$1 k=0; shift
  {
    echo "tasks:"
    echo "  - name: sweep"
    echo "    parallel-tasks:"
    echo "      - name: t <k0> <k1> <k2> <k3>"
    echo "        cmd: 'echo <k0> <k1> <k2> <k3>'"
    echo "        matrix:"
    for n in "$@"; do
      printf '          k%d: [%s]\n' "$k" "$(seq -s, 0 $((n - 1)))"
      k=$((k + 1))
    done
    while [ "$k" -lt 4 ]; do printf '          k%d: [x]\n' "$k"; k=$((k + 1)); done
  } > "$file"
}
matrix m1e5.yml 10 10 10 99     # 99,000: under the default cap (100,000 tasks, blocks counted)
matrix m1e6.yml 10 10 100 100   # 1,000,000: refused by the cap
matrix m1e8.yml 100 100 100 100 # 100,000,000: the probe's file

# run LABEL BIN FILE [LIMITS]: one check, its time, exit code and peak RSS.
run() {
  local label=$1 bin=$2 file=$3 code=0
  ( [ "$bin" = "$PEER" ] && ulimit -v "$PEER_MEM_KB"
    exec timeout "$PEER_TIMEOUT" /usr/bin/time -f "%e %M" -o t.out "$bin" check "$file" ) >/dev/null 2>err.out || code=$?
  read -r secs rss < <(tail -1 t.out)
  secs=$(figure "$label $file: wall time" "${secs:-}") rss=$(figure "$label $file: peak RSS" "${rss:-}")
  printf '%-28s %-10s exit %-3s %7.2f s  %8.0f MiB  %s\n' "$label" "$file" "$code" "$secs" "$((rss / 1024))" \
    "$(head -c 90 err.out | tr '\n' ' ')"
}

# sigterm LABEL BIN FILE AFTER: SIGTERM a check AFTER seconds in; seconds from the signal
# to its exit, its exit code and peak RSS.
sigterm() {
  local label=$1 bin=$2 file=$3 after=$4 code=0
  ( [ "$bin" = "$PEER" ] && ulimit -v "$PEER_MEM_KB"
    exec /usr/bin/time -f "%e %M" -o t.out "$bin" check "$file" ) >/dev/null 2>err.out &
  local pid=$!
  sleep "$after"
  local child sent
  child=$(pgrep -P "$pid") || { echo "$label: check ended before the signal" >&2; wait "$pid" || true; return; }
  sent=$(date +%s.%N)
  kill -TERM "$child"
  wait "$pid" || code=$?
  local gone
  gone=$(date +%s.%N)
  read -r _ rss < <(tail -1 t.out)
  local took
  took=$(figure "$label: seconds to exit" "$(echo "$gone - $sent" | bc)") rss=$(figure "$label: peak RSS" "${rss:-}")
  printf '%-28s SIGTERM %.1fs into check %-9s exit %-3s %6.2f s to exit  %6.0f MiB peak\n' "$label" "$after" "$file" "$code" \
    "$took" "$((rss / 1024))"
}

echo "== check on large matrices"
for f in m1e5.yml m1e6.yml m1e8.yml; do
  run "runall (this tree)" "$RUNALL" "$f"
  [ -n "$PEER" ] && run "peer (no max-tasks)" "$PEER" "$f"
done
echo "== SIGTERM during a long check"
sigterm "runall (this tree)" "$RUNALL" m1e5.yml 0.3
[ -n "$PEER" ] && sigterm "peer (no max-tasks)" "$PEER" m1e5.yml 0.3
[ -n "$PEER" ] && sigterm "peer (no max-tasks)" "$PEER" m1e6.yml 3
exit 0
