#!/usr/bin/env bash
# Core benchmark, two builds side by side (docs/benchmarks.md): 1000 tasks of `true` in one
# parallel block with max-parallel-commands 8, and bashful's 80,000-line stress file
# (09-stress-and-flow-control.yml, with bench/core.sh's stand-in scripts), each run by the
# build before a change and the build after it in turn, the order swapped every round.
# Both binaries are copied afresh and dropped from the page cache first, so that neither
# maps more of its file than the other. Prints each build's medians and ranges.
#
#   RUNALL_BEFORE=/path/to/old/runall RUNALL=/path/to/new/runall ROUNDS=7 bench/core_ab.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
ROUNDS=${ROUNDS:-7}
N=${N:-1000}
SHARED=${SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
: "${RUNALL_BEFORE:?set RUNALL_BEFORE to the build to compare with}"
. "$(dirname "$0")/need.sh"
need awk sort seq python3 mktemp "$RUNALL" "$RUNALL_BEFORE"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
[ -d "$SHARED/bashful-compat" ] || { echo "bench: $SHARED/bashful-compat is missing (set SHARED)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$RUNALL_BEFORE" "$work/before"; cp "$RUNALL" "$work/after"; sync
python3 -c 'import os, sys
for p in sys.argv[1:]:
    fd = os.open(p, os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$work/before" "$work/after"
cd "$work"
{
  echo "config:"
  echo "  max-parallel-commands: 8"
  echo "tasks:"
  echo "  - name: many"
  echo "    parallel-tasks:"
  for i in $(seq "$N"); do echo "      - {name: t$i, cmd: 'true'}"; done
} > many.yml
mkdir -p stress/example/scripts
printf '#!/bin/sh\nfor i in $(seq "$1"); do echo "line $i of $1: lorem ipsum dolor sit amet"; done\n' > stress/example/scripts/stress-line.sh
printf '#!/bin/sh\nfor i in $(seq "$1"); do printf x; done\necho\n' > stress/example/scripts/stress-char.sh
chmod +x stress/example/scripts/*.sh

# median and range of the numbers in file $1, scaled by $2
stats() { sort -n "$1" | awk -v s="$2" '{a[NR]=$1/s} END {m=(NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); printf "%.2f (%.2f-%.2f)", m, a[1], a[NR]}'; }

for b in before after; do : > "$b.core"; : > "$b.rss"; : > "$b.stress"; done
for r in $(seq "$ROUNDS"); do
  order="before after"; [ $((r % 2)) = 0 ] && order="after before"
  for b in $order; do
    rm -rf logs; /usr/bin/time -f "%e %M" -o t.out "./$b" --output plain --log-dir "$work/logs" many.yml >/dev/null
    read -r secs rss < t.out; echo "$secs" >> "$b.core"; echo "$rss" >> "$b.rss"
    # 2>/dev/null: the file repeats task names, which runall warns about at every run.
    (cd stress && rm -rf logs && /usr/bin/time -f "%e %M" -o ../t.out "../$b" --output plain --log-dir "$work/stress/logs" "$SHARED/bashful-compat/09-stress-and-flow-control.yml" >/dev/null 2>&1)
    read -r secs _ < t.out; echo "$secs" >> "$b.stress"
  done
done

echo "| build | $N x \`true\`, 8 at once: wall (s), median (range) | peak RSS (MB), median (range) | bashful 09: wall (s), median (range) |"
echo "|---|---|---|---|"
for b in before after; do
  core=$(stats "$b.core" 1) rss=$(stats "$b.rss" 1024) stress=$(stats "$b.stress" 1) # a failed one stops the script
  echo "| $b | $core | $rss | $stress |"
done
echo "($ROUNDS rounds, the order swapped each round; load average at the end: $(cut -d' ' -f1-3 /proc/loadavg))"
