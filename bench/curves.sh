#!/usr/bin/env bash
# Sweeps that adapt (docs/benchmarks.md): real learning curves (scikit-learn's digits, an MLP
# trained one epoch at a time with partial_fit, each epoch padded to EPOCH seconds so that a
# trial behaves like GPU training) on simulated GPUs. The same 27 configurations (a 3×3×3
# matrix) run without early stopping, with asha and with median stopping; then 27 trials
# sampled from the same space. For each: GPU-time (the sum of the trials' seconds), wall
# time, the best objective (val_accuracy), and how many trials were pruned.
#
#   RUNALL=./runall EPOCH=0.5 bench/curves.sh
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
EPOCH=${EPOCH:-0.5}
EPOCHS=${EPOCHS:-27}
PY=${PYTHON:-/usr/bin/python3}
TRAIN=$(cd "$(dirname "$0")" && pwd)/curves/train_digits.py
"$PY" -c 'import sklearn' 2>/dev/null || { echo "bench: scikit-learn is missing (apt-get install python3-sklearn)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

sweep() { # name, early-stop line (or ""), the trial's space lines
  local name=$1 early=$2 space=$3
  cat > "$name.yml" <<YML
config:
  max-parallel-commands: 6
  order: file
  objective: {metric: val_accuracy, mode: max}
tasks:
  - name: $name
    gpu-memory: 4GiB
$early
    parallel-tasks:
      - name: lr=<lr> alpha=<alpha> hidden=<hidden>
        cmd: $PY $TRAIN --lr <lr> --alpha <alpha> --hidden <hidden> --epochs $EPOCHS --epoch-seconds $EPOCH
$space
YML
}
grid='        matrix: {lr: [0.001, 0.01, 0.1], alpha: [0.0001, 0.01, 1], hidden: [8, 32, 128]}'
sample="        sample: {lr: 'loguniform(0.001, 0.1)', alpha: 'loguniform(0.0001, 1)', hidden: 'int(8, 128)'}
        trials: 27
        seed: 1"
sweep grid "" "$grid"
sweep asha "    early-stop: {method: asha, grace: 1, reduction: 3, max: $EPOCHS}" "$grid"
sweep median "    early-stop: {method: median, grace: 3, min-trials: 3}" "$grid"
sweep sample "" "$sample"

printf '%-8s %14s %10s %10s %8s\n' sweep gpu-time-s wall-s best pruned
for s in grid asha median sample; do
  "$RUNALL" --output plain --fake-gpus 2x16GiB --log-dir logs --results "$s.json" "$s.yml" > "$s.out"
  "$PY" - "$s" <<'PY'
import json, sys
from datetime import datetime
name = sys.argv[1]
r = json.load(open(name + ".json"))
t = lambda s: datetime.fromisoformat(s.replace("Z", "+00:00"))
gpu = sum((t(x["finished_at"]) - t(x["started_at"])).total_seconds() for x in r["tasks"] if x.get("started_at"))
wall = (t(r["finished_at"]) - t(r["started_at"])).total_seconds()
best = max((x["metrics"]["val_accuracy"] for x in r["tasks"] if x["status"] in ("ok", "pruned") and "val_accuracy" in x.get("metrics", {})), default=float("nan"))
ok_best = max((x["metrics"]["val_accuracy"] for x in r["tasks"] if x["status"] == "ok" and "val_accuracy" in x.get("metrics", {})), default=float("nan"))
pruned = sum(1 for x in r["tasks"] if x["status"] == "pruned")
print(f"{name:8s} {gpu:14.1f} {wall:10.1f} {ok_best:10.4f} {pruned:8d}")
PY
done
