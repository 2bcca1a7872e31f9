#!/usr/bin/env bash
# Pruning and pausing hand-off (docs/benchmarks.md): on a simulated GPU that holds one trial
# at a time, how long after a trial leaves its room the next waiting trial starts, for a
# trial that asha prunes, one that sha pauses at its checkpoint, and, side by side in the
# same run, one that exits on its own at that point. Each gap is from the trial's end event
# (its processes gone, as runall records it) to the next trial's start event, from
# `--output json`. Median and max of ROUNDS rounds.
#
#   RUNALL=./runall ROUNDS=20 bench/prune.sh
set -euo pipefail
. "$(dirname "$0")/need.sh"
RUNALL=${RUNALL:-$PWD/runall}
ROUNDS=${ROUNDS:-20}
need awk sort seq mktemp /usr/bin/python3 "$RUNALL"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
trial() { # name, command; with a checkpoint directory of its own when $ck
  echo "      - name: $1"
  echo "        cmd: '$2'"
  [ -z "$ck" ] || echo "        checkpoint: ck/$1"
}
saves() { echo "mkdir -p ck/$1; echo runall-metric acc=$2; echo 1 > ck/$1/step; echo runall-checkpoint step=1"; }
for kind in pruned paused exits; do
  early='' c='echo runall-metric acc=0.1' ck=''
  case $kind in
  pruned)
    early='    early-stop: {method: asha, grace: 1, reduction: 3}'
    c='echo runall-metric acc=0.1; sleep 60 & wait' ;;
  paused)
    # Every trial pauses at sha's first rung once its checkpoint holds step 1 (it says so at
    # once); c would sleep a minute: d waits for its room meanwhile.
    early='    early-stop: {method: sha, grace: 1, reduction: 4, max: 3}'
    c="$(saves c 0.1); sleep 60 & wait" ck=1 ;;
  esac
  {
    printf 'config:\n  objective: {metric: acc, mode: max}\ntasks:\n  - name: sweep\n    order: file\n    gpu-memory: 10GiB\n'
    [ -z "$early" ] || echo "$early"
    echo "    parallel-tasks:"
    trial a "$(saves a 0.9)"
    trial b "$(saves b 0.95)"
    trial c "$c"
    trial d "$(saves d 0.99)"
  } > $kind.yml
done
gap() { # JSON events of a run: ms from c's end (its first: a pause, a prune or its exit) to d's first start
  /usr/bin/python3 - "$1" <<'PY'
import json, sys
from datetime import datetime
evs = [json.loads(l) for l in open(sys.argv[1])]
p = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
end = next(e for e in evs if e.get("event") == "end" and e.get("task") == "c")
start = next(e for e in evs if e.get("event") == "start" and e.get("task") == "d")
print(end["status"], round((p(start["time"]) - p(end["time"])).total_seconds() * 1000, 2))
PY
}
: > pruned.ms; : > paused.ms; : > exits.ms
for i in $(seq "$ROUNDS"); do
  for kind in pruned paused exits; do
    rm -rf ck logs/state/checkpoints
    RUNALL_FAKE_GPU_STATE="$work/gpu-$kind" "$RUNALL" --output json --fake-gpus 16GiB --log-dir logs $kind.yml > $kind.events
    read -r status ms < <(gap $kind.events)
    want=ok; [ $kind != exits ] && want=$kind
    [ "$status" = "$want" ] || { echo "bench: c ended $status, want $want" >&2; exit 1; }
    ms=$(figure "$kind: ms from c's end to d's start" "${ms:-}")
    echo "$ms" >> $kind.ms
  done
done
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %.2f ms, max %.2f ms (%d rounds)\n", (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2), a[NR], NR}'; }
# Each figure is computed before anything is printed: one that fails stops the script.
pruned=$(stats pruned.ms) paused=$(stats paused.ms) exits=$(stats exits.ms)
echo "pruned trial -> next start: $pruned"
echo "paused trial -> next start: $paused"
echo "trial exits  -> next start: $exits"
