#!/usr/bin/env bash
# Report benchmark (docs/benchmarks.md): a real run of 1000 trials, each reporting
# val_accuracy and loss for 20 epochs with runall-metric lines, then `runall report` of its
# log directory (read results.json and gpu-samples.jsonl, write report.html), timed; side
# by side in the same rounds, Python's json reading and writing the same results.json (the
# least any reader of the results does). Prints the median of ROUNDS and the page's size.
#
#   RUNALL=./runall ROUNDS=5 bench/report.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
ROUNDS=${ROUNDS:-5}
. "$(dirname "$0")/need.sh"
need awk sort seq grep du cut python3 mktemp "$RUNALL"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time is missing (apt-get install time)" >&2; exit 1; }
# The interpreter itself, not a pyenv shim (whose start-up would be timed too).
PY=$(python3 -c 'import sys; print(sys.executable)')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
cat > sweep.yml <<'YML'
config:
  max-parallel-commands: 16
  objective: {metric: val_accuracy, mode: max}
tasks:
  - name: sweep
    parallel-tasks:
      - name: lr=<lr> bs=<bs> seed=<seed>
        matrix: {lr: [0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001, 0.0005, 0.0002, 0.0001], bs: [16, 32, 64, 128, 256], seed: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20]}
        cmd: >-
          awk -v lr=<lr> -v bs=<bs> -v s=<seed> 'BEGIN { for (e = 1; e <= 20; e++)
          printf "runall-metric val_accuracy=%.4f loss=%.4f\n", 0.9 - 0.5/e - lr - bs/10000 + s/1000, 2/e + lr }'
YML
"$RUNALL" --output plain --log-dir logs sweep.yml > run.out
trials=$(grep -c '"name": "lr=' logs/latest/results.json)

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
: > report.times; : > json.times; : > report.rss
for r in $(seq "$ROUNDS"); do
  for tool in report json; do
    [ $((r % 2)) = 0 ] && tool=$([ $tool = report ] && echo json || echo report)
    if [ $tool = report ]; then
      /usr/bin/time -f "%e %M" -o t.out "$RUNALL" report logs -o report.html > /dev/null
      read -r secs rss < t.out; echo "$secs" >> report.times; echo "$rss" >> report.rss
    else
      /usr/bin/time -f "%e %M" -o t.out "$PY" -c 'import json, sys; json.dump(json.load(open(sys.argv[1])), open(sys.argv[2], "w"))' \
        logs/latest/results.json copy.json
      read -r secs _ < t.out; echo "$secs" >> json.times
    fi
  done
done

echo "| $trials trials x 20 epochs ($ROUNDS rounds, median) | wall time (s) | peak RSS (MB) | output |"
echo "|---|---|---|---|"
secs=$(figure "runall report: wall time" "$(median < report.times)")
rss=$(figure "runall report: peak RSS" "$(median < report.rss | awk '{printf "%.1f", $1/1024}')")
json=$(figure "python3 json: wall time" "$(median < json.times)")
in=$(du -k logs/latest/results.json | cut -f1) out=$(du -k report.html | cut -f1)
echo "| runall report (results.json $in KiB) | $secs | $rss | report.html $out KiB |"
echo "| python3 json.load + json.dump of results.json | $json | | |"
