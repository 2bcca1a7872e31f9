#!/usr/bin/env bash
# Early stopping's cost (docs/benchmarks.md): 2 trials printing N runall-metric lines each
# (default 200,000) under early-stop median, and the same without early stopping, for
# RUNALL and, with PEER set, an older build side by side, alternating which goes first each
# round; wall time and peak RSS from /usr/bin/time, median of ROUNDS (default 3).
#
#   RUNALL=./runall PEER=/tmp/runall-old ROUNDS=3 bench/median.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
PEER=${PEER:-}
ROUNDS=${ROUNDS:-3}
N=${N:-200000}
. "$(dirname "$0")/need.sh"
need awk sort seq mktemp "$RUNALL" ${PEER:+"$PEER"}
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > median.yml <<YML
config:
  objective: {metric: loss, mode: min}
tasks:
  - name: sweep
    early-stop: {method: median, grace: 1, min-trials: 1}
    parallel-tasks:
      - name: t<replace>
        for-each: [1, 2]
        cmd: awk 'BEGIN { for (i = 1; i <= $N; i++) printf "runall-metric loss=%.6f\n", 1/i }'
YML
grep -v early-stop median.yml > none.yml

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

builds=("after=$RUNALL")
[ -n "$PEER" ] && builds=("before=$PEER" "${builds[@]}")
for r in $(seq "$ROUNDS"); do
  order=("${builds[@]}")
  [ $((r % 2)) = 0 ] && [ ${#builds[@]} = 2 ] && order=("${builds[1]}" "${builds[0]}")
  for b in "${order[@]}"; do
    name=${b%%=*} bin=${b#*=}
    for file in median none; do
      rm -rf logs
      /usr/bin/time -f "%e %M" -o t.out "$bin" --output plain --log-dir logs $file.yml >/dev/null
      read -r secs rss < t.out
      echo "$secs" >> "$name.$file.times"; echo "$rss" >> "$name.$file.rss"
    done
  done
done

echo "| 2 trials x $N metric lines ($ROUNDS rounds, median) | early-stop median: wall (s) | peak RSS (MB) | no early stopping: wall (s) | peak RSS (MB) |"
echo "|---|---|---|---|---|"
for b in "${builds[@]}"; do
  name=${b%%=*}
  row="| $name"
  for file in median none; do
    secs=$(figure "$name $file: wall time" "$(median < "$name.$file.times")")
    rss=$(figure "$name $file: peak RSS" "$(median < "$name.$file.rss" | awk '{printf "%.1f", $1/1024}')")
    row+=" | $secs | $rss"
  done
  echo "$row |"
done
