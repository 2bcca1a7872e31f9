#!/usr/bin/env bash
# Sweeps that adapt (docs/benchmarks.md): real learning curves (scikit-learn's digits, an MLP
# trained one epoch at a time with partial_fit, each epoch padded to EPOCH seconds so that a
# trial behaves like GPU training) on simulated GPUs, 4 trials at a time. The same 27
# configurations (a 3×3×3 grid) run without early stopping, with asha and with median
# stopping; then 27 trials sampled from the same space. For each: GPU-time (the sum of the trials' seconds), wall
# time, the best objective (val_accuracy), and how many trials were pruned.
#
#   RUNALL=./runall EPOCH=0.7 OUT=curves-results bench/curves.sh   (OUT keeps the results)
set -euo pipefail
RUNALL=${RUNALL:-$PWD/runall}
EPOCH=${EPOCH:-0.7}
EPOCHS=${EPOCHS:-27}
PY=${PYTHON:-/usr/bin/python3}
TRAIN=$(cd "$(dirname "$0")" && pwd)/curves/train_digits.py
"$PY" -c 'import sklearn' 2>/dev/null || { echo "bench: scikit-learn is missing (apt-get install python3-sklearn)" >&2; exit 1; }

OUT=${OUT:+$(mkdir -p "$OUT" && cd "$OUT" && pwd)}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

# The 27 configurations of the 3x3x3 grid, listed in one shuffled order (the same for every
# sweep): in the matrix's own order the trials would come from worst to best learning rate,
# and an asynchronous rule can never stop a trial better than every one before it.
grid_trials=$("$PY" - "$PY" "$TRAIN" "$EPOCHS" "$EPOCH" <<'PY'
import itertools, random, sys
py, train, epochs, epoch = sys.argv[1:]
configs = list(itertools.product(["0.001", "0.01", "0.1"], ["0.0001", "0.01", "1"], ["8", "32", "128"]))
random.Random(1).shuffle(configs)
for lr, alpha, hidden in configs:
    print(f"      - name: lr={lr} alpha={alpha} hidden={hidden}")
    print(f"        cmd: {py} {train} --lr {lr} --alpha {alpha} --hidden {hidden} --epochs {epochs} --epoch-seconds {epoch}")
PY
)
sample_trials="      - name: lr=<lr> alpha=<alpha> hidden=<hidden>
        cmd: $PY $TRAIN --lr <lr> --alpha <alpha> --hidden <hidden> --epochs $EPOCHS --epoch-seconds $EPOCH
        sample: {lr: 'loguniform(0.001, 0.1)', alpha: 'loguniform(0.0001, 1)', hidden: 'int(8, 128)'}
        trials: 27
        seed: 1"
sweep() { # name, early-stop line (or ""), the trials
  cat > "$1.yml" <<YML
config:
  max-parallel-commands: 4
  order: file
  objective: {metric: val_accuracy, mode: max}
tasks:
  - name: $1
    gpu-memory: 7GiB
$2
    parallel-tasks:
$3
YML
}
sweep grid "" "$grid_trials"
sweep asha "    early-stop: {method: asha, grace: 1, reduction: 3, max: $EPOCHS}" "$grid_trials"
sweep median "    early-stop: {method: median, grace: 3, min-trials: 3}" "$grid_trials"
sweep sample "" "$sample_trials"

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
if [ -n "${OUT:-}" ]; then mkdir -p "$OUT" && cp ./*.json ./*.yml "$OUT"/; fi
