#!/usr/bin/env bash
# Pruning hand-off (docs/benchmarks.md): on a simulated GPU that holds one trial at a time,
# how long after a pruned trial ends (its processes gone, as runall records it) the next
# waiting trial starts; side by side, in the same run, the same gap after a trial that exits
# on its own at the same point. Median and max of ROUNDS rounds.
#
#   RUNALL=./runall ROUNDS=20 bench/prune.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
ROUNDS=${ROUNDS:-20}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
for kind in pruned exits; do
  if [ $kind = pruned ]; then early='    early-stop: {method: asha, grace: 1, reduction: 3}'; c='echo runall-metric acc=0.1; sleep 60 & wait'
  else early=''; c='echo runall-metric acc=0.1'; fi
  cat > $kind.yml <<YML
config:
  objective: {metric: acc, mode: max}
tasks:
  - name: sweep
    order: file
    gpu-memory: 10GiB
$early
    parallel-tasks:
      - {name: a, cmd: 'echo runall-metric acc=0.9'}
      - {name: b, cmd: 'echo runall-metric acc=0.95'}
      - {name: c, cmd: '$c'}
      - {name: d, cmd: 'echo runall-metric acc=0.99'}
YML
done
gap() { # results file: ms from c's end to d's start
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
from datetime import datetime
r = {t["name"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
p = datetime.fromisoformat
print(round((p(r["d"]["started_at"]) - p(r["c"]["finished_at"])).total_seconds() * 1000, 2))
PY
}
: > pruned.ms; : > exits.ms
for i in $(seq "$ROUNDS"); do
  for kind in pruned exits; do
    RUNALL_FAKE_GPU_STATE="$work/gpu-$kind" "$RUNALL" --output plain --fake-gpus 16GiB --log-dir logs --results $kind.json $kind.yml >/dev/null
    want=ok; [ $kind = pruned ] && want=pruned
    grep -q "\"status\": \"$want\"" $kind.json || { echo "bench: c did not end $want" >&2; exit 1; }
    gap $kind.json >> $kind.ms
  done
done
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %.2f ms, max %.2f ms (%d rounds)\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR], NR}'; }
echo "pruned trial -> next start: $(stats pruned.ms)"
echo "trial exits  -> next start: $(stats exits.ms)"
