#!/usr/bin/env bash
# The MPS check on a real GPU (issue 37 point 5; docs/gpu.md, "MPS"): with gpu-isolation: mps,
# (1) a trial that allocates past its cap gets CUDA out of memory itself and its co-runner
# finishes, and (2) the makespan of light and medium trials packed by memory, without and with
# MPS. It builds nothing: it takes runall's binary along (RUNALL, else ./runall, else
# dist/runall-linux-amd64) and runs bench/gpu_trial.py's PyTorch trials.
#
#   bench/mps-check.sh                     # on the GPU machine, with nvidia-cuda-mps-control on PATH
#   bench/mps-check.sh --trials 4 --steps 300
#   bench/mps-check.sh --smoke             # anywhere: a simulated GPU and its simulated MPS, fake-alloc trials
#
# PYTHON picks the interpreter that imports torch (not needed with --smoke). Without a GPU
# (and without --smoke) it says so and exits 1. It prints one line for the cap and one table.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
smoke=0 trials=4 steps=300 kinds="light medium"
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --trials) trials=$2; shift ;;
    --steps) steps=$2; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "mps-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
die() { echo "mps-check: $*" >&2; exit 1; }

RUNALL=${RUNALL:-}
if [ -z "$RUNALL" ]; then
  for c in "$root/runall" "$root/dist/runall-linux-amd64"; do
    [ -x "$c" ] && { RUNALL=$c; break; }
  done
fi
[ -n "$RUNALL" ] && [ -x "$RUNALL" ] || die "no runall binary: build one (make build) and take it along, or set RUNALL; this script builds nothing"
RUNALL=$(cd "$(dirname "$RUNALL")" && pwd)/$(basename "$RUNALL")

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fake=()
if [ "$smoke" = 1 ]; then
  fake=(--fake-gpus 1x16GiB)
  gpu="none: --smoke (a simulated 16 GiB GPU and runall's simulated MPS)"
  # The trials: fake-alloc, as a PyTorch process holds memory and trains (docs/gpu.md).
  greedy="runall fake-alloc --size 3GiB --ramp 0 --hold 1s --release-lag 0"
  calm="runall fake-alloc --size 900MiB --ramp 0 --hold 3s --release-lag 0"
  trial() { echo "runall fake-alloc --size 1GiB --ramp 0 --hold 0s --release-lag 0 --train-steps $steps --step-time 20ms --busy $([ "$1" = light ] && echo 0.3 || echo 1) --sm 0.5"; }
else
  command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || die "no NVIDIA GPU found (nvidia-smi is missing or sees none): run it on the GPU machine, or --smoke here"
  command -v nvidia-cuda-mps-control >/dev/null || die "nvidia-cuda-mps-control is not on PATH: install NVIDIA's utilities (docs/gpu.md, MPS)"
  PYTHON=${PYTHON:-python3}
  "$PYTHON" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)' || die "$PYTHON has no CUDA PyTorch: install it, or set PYTHON"
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)
  # greedy takes 1 GiB at a time up to 6 GiB under a 2 GiB need; calm holds 1 GiB for 8 s.
  greedy="$PYTHON -c \\\"import torch, time; x = [torch.empty(2**30, dtype=torch.uint8, device='cuda') for _ in range(6)]; time.sleep(2)\\\""
  calm="$PYTHON -c \\\"import torch, time; x = torch.empty(2**30, dtype=torch.uint8, device='cuda'); time.sleep(8)\\\""
  trial() { echo "$PYTHON $here/gpu_trial.py --kind $1 --steps $steps --out $work/out-<replace>.json"; }
fi

# (1) The cap: greedy runs out of memory itself (oom-retries 0: no second attempt), calm finishes.
cat > "$work/cap.yml" <<YML
config: {gpu-isolation: mps, max-parallel-commands: 2, stop-on-failure: false, oom-retries: 0}
tasks:
  - name: cap
    parallel-tasks:
      - {name: calm, gpu-memory: 2GiB, cmd: "$calm"}
      - {name: greedy, gpu-memory: 2GiB, cmd: "$greedy"}
YML
"$RUNALL" "${fake[@]}" --output plain --log-dir "$work/logs" --results "$work/cap.json" "$work/cap.yml" > "$work/cap.log" 2>&1 || true
cap=$(python3 - "$work/cap.json" <<'PY'
import json, sys
try:
    tasks = {t["name"]: t for t in json.load(open(sys.argv[1]))["tasks"]}
except (OSError, ValueError, KeyError) as e:
    print(f"FAILED: no results ({e})"); sys.exit()
g, c = tasks.get("greedy", {}), tasks.get("calm", {})
try:
    said = open(g.get("log_file", "")).read().lower()  # its log: the output of each attempt
except OSError:
    said = ""
oom = "out of memory" in said
ok = g.get("status") == "failed" and oom and c.get("status") == "ok" and c.get("attempts") == 1
print(("ok" if ok else "FAILED") + f": greedy {g.get('status')} ({'CUDA out of memory' if oom else 'no out-of-memory error'}), calm {c.get('status')} after {c.get('attempts')} attempt(s)")
PY
)
case $cap in FAILED*) echo "mps-check: the cap check's output:" >&2; tail -20 "$work/cap.log" >&2 ;; esac

# (2) Makespans: each kind's trials packed by memory, without and with MPS.
rows=()
for kind in $kinds; do
  row="$kind"
  for iso in none mps; do
    cat > "$work/$kind-$iso.yml" <<YML
config: {gpu-isolation: $iso, max-parallel-commands: $trials, stop-on-failure: false}
tasks:
  - name: $kind
    gpu-memory: 2GiB
    parallel-tasks:
      - name: $kind-<replace>
        for-each: [$(seq -s ', ' 1 "$trials")]
        cmd: "$(trial "$kind")"
YML
    t0=$(date +%s.%N)
    if "$RUNALL" "${fake[@]}" --output plain --log-dir "$work/logs" "$work/$kind-$iso.yml" > "$work/$kind-$iso.log" 2>&1; then
      row="$row $(python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f}')" "$t0" "$(date +%s.%N)")"
    else
      row="$row failed"
      echo "mps-check: $kind with gpu-isolation: $iso failed; its output:" >&2
      tail -20 "$work/$kind-$iso.log" >&2
    fi
  done
  rows+=("$row")
done
echo "mps-check on $gpu; $("$RUNALL" --version 2>&1 | head -1); $trials trials of each kind, $steps steps each"
echo "a trial past its MPS cap: $cap"
echo "| kind | time-sliced (gpu-isolation: none) | MPS (gpu-isolation: mps) |"
echo "|---|---|---|"
for r in "${rows[@]}"; do
  set -- $r
  python3 -c "import sys
k, a, b = sys.argv[1:4]
try: x = f' ({float(a) / float(b):.2f}x)'
except ValueError: x = ''
print(f'| {k} | {a} s | {b} s{x} |')" "$1" "$2" "$3"
done
case $cap in FAILED*) exit 1 ;; esac
