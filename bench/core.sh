#!/usr/bin/env bash
# Core benchmark (docs/benchmarks.md): 1000 tasks of `true` in one parallel block with
# max-parallel-commands 8, side by side with GNU parallel -j8 in the same run; runall's peak
# RSS; and bashful's 09-stress-and-flow-control.yml (heavy output) with stand-in scripts.
# With PEER set (an older build), it runs beside RUNALL in every round, the order turning
# each round, so that both meet the same load.
#
#   RUNALL=./runall ROUNDS=5 bench/core.sh
#   RUNALL=./runall PEER=/tmp/runall-old ROUNDS=5 bench/core.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
PEER=${PEER:-}
ROUNDS=${ROUNDS:-5}
N=${N:-1000}
SHARED=${SHARED:-$(cd "$(dirname "$0")/../.." && pwd)/shared}
. "$(dirname "$0")/need.sh"
need awk sort seq tail mktemp "$RUNALL" ${PEER:+"$PEER"}
command -v parallel >/dev/null || { echo "bench: GNU parallel is missing (apt-get install parallel)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
{
  echo "config:"
  echo "  max-parallel-commands: 8"
  echo "tasks:"
  echo "  - name: many"
  echo "    parallel-tasks:"
  for i in $(seq "$N"); do echo "      - {name: t$i, cmd: 'true'}"; done
} > many.yml
seq "$N" > items

# median of the numbers on stdin
median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

# The tools of each round: this build, the peer build when given, and GNU parallel.
tools=("runall=$RUNALL")
[ -n "$PEER" ] && tools+=("peer=$PEER")
tools+=("parallel=")
for r in $(seq "$ROUNDS"); do
  # Turn the order each round so that no tool always runs on a warmer machine.
  order=("${tools[@]:r%${#tools[@]}}" "${tools[@]:0:r%${#tools[@]}}")
  for t in "${order[@]}"; do
    name=${t%%=*} bin=${t#*=}
    if [ "$name" = parallel ]; then
      /usr/bin/time -f "%e %M" -o t.out parallel -j8 true :::: items >/dev/null
    else
      /usr/bin/time -f "%e %M" -o t.out "$bin" --output plain --log-dir "$work/logs" many.yml >/dev/null
    fi
    read -r secs rss < t.out
    echo "$secs" >> "$name.times"; echo "$rss" >> "$name.rss"
  done
done

echo "| $N x \`true\`, 8 at once ($ROUNDS rounds, median) | wall time (s) | peak RSS (MB) |"
echo "|---|---|---|"
for t in "${tools[@]}"; do
  name=${t%%=*}
  label=$([ "$name" = parallel ] && echo "GNU parallel -j8" || echo "$name (${t#*=})")
  rss=$(median < "$name.rss" | awk '{printf "%.1f", $1/1024}')" (max $(sort -n "$name.rss" | tail -1 | awk '{printf "%.1f", $1/1024}'))"
  [ "$name" = parallel ] && rss=""
  secs=$(figure "$name: wall time" "$(median < "$name.times")")
  echo "| $label | $secs | $rss |"
done

if [ -d "$SHARED/bashful-compat" ]; then
  mkdir -p stress/example/scripts && cd stress
  # bashful's stand-ins: N lines, or N characters without newlines.
  printf '#!/bin/sh\nfor i in $(seq "$1"); do echo "line $i of $1: lorem ipsum dolor sit amet"; done\n' > example/scripts/stress-line.sh
  printf '#!/bin/sh\nfor i in $(seq "$1"); do printf x; done\necho\n' > example/scripts/stress-char.sh
  chmod +x example/scripts/*.sh
  builds=("runall=$RUNALL")
  [ -n "$PEER" ] && builds+=("peer=$PEER")
  for r in $(seq "$ROUNDS"); do
    order=("${builds[@]:r%${#builds[@]}}" "${builds[@]:0:r%${#builds[@]}}")
    for b in "${order[@]}"; do
      # 2>/dev/null: the file repeats task names, which runall warns about at every run.
      /usr/bin/time -f "%e %M" -o t.out "${b#*=}" --output plain --log-dir "$work/logs" "$SHARED/bashful-compat/09-stress-and-flow-control.yml" >/dev/null 2>&1
      read -r secs _ < t.out; echo "$secs" >> "${b%%=*}.stress.times"
    done
  done
  echo
  echo "| bashful 09-stress-and-flow-control.yml (4x10000 lines, 4x10000 chars) | wall time (s), median of $ROUNDS |"
  echo "|---|---|"
  for b in "${builds[@]}"; do
    secs=$(figure "${b%%=*}: stress wall time" "$(median < "${b%%=*}.stress.times")")
    echo "| ${b%%=*} (${b#*=}) --output plain | $secs |"
  done
fi
