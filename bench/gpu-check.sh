#!/usr/bin/env bash
# The check on a real GPU (docs/benchmarks.md, "On a real GPU"; issue 36 point 4), in one
# call that builds nothing: it takes runall's binary along (RUNALL, else ./runall, else
# dist/runall-linux-amd64), finds the NVIDIA GPU with nvidia-smi, and runs PyTorch trials of
# three kinds on synthetic data (bench/gpu_trial.py: light, an MLP with a data-loading stall;
# medium, a small conv net on 32x32 inputs; heavy, a transformer block at a batch that keeps
# the GPU busy), each kind one at a time, packed by memory, and packed by progress where this
# build supports gpu-sharing: progress. It prints one table of makespans and rates, naming
# the GPU and the driver. Each trial is sized from a short calibration run to take about
# SECONDS alone, so that the whole check stays under 10 minutes on any GPU.
#
#   bench/gpu-check.sh                      # on the GPU machine: ./runall or dist/ taken along
#   RUNALL=/path/runall bench/gpu-check.sh --trials 4 --seconds 12
#   bench/gpu-check.sh --smoke              # anywhere: tiny models on the CPU, a simulated GPU, seconds
#
# PYTHON picks the interpreter (default: the first of python3, /usr/bin/python3 that imports
# torch). Without a GPU (and without --smoke) it says so and exits 1; under make (make bench)
# it says so and exits 0, as a check that cannot run here.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
. "$here/need.sh"
need awk # the GPU's name and driver, read from nvidia-smi's line
smoke=0 trials=4 seconds=12 kinds="light medium heavy"
while [ $# -gt 0 ]; do
  case $1 in
    --smoke) smoke=1 ;;
    --trials) trials=$2; shift ;;
    --seconds) seconds=$2; shift ;;
    --kinds) kinds=$2; shift ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
  shift
done
if [ "$smoke" = 1 ]; then
  [ "$seconds" = 12 ] && seconds=1
  [ "$trials" = 4 ] && trials=2
fi

die() { echo "gpu-check: $*" >&2; exit 1; }

# runall: taken along, never built here.
RUNALL=${RUNALL:-}
if [ -z "$RUNALL" ]; then
  for c in "$root/runall" "$root/dist/runall-linux-amd64"; do
    [ -x "$c" ] && { RUNALL=$c; break; }
  done
fi
[ -n "$RUNALL" ] && [ -x "$RUNALL" ] || die "no runall binary: build one where Go is (make build, or make release for dist/runall-linux-amd64) and take it along, or set RUNALL; this script builds nothing"
RUNALL=$(cd "$(dirname "$RUNALL")" && pwd)/$(basename "$RUNALL")

# Python with PyTorch.
PYTHON=${PYTHON:-}
if [ -z "$PYTHON" ]; then
  for c in python3 /usr/bin/python3; do
    if command -v "$c" >/dev/null && "$c" -c 'import torch' 2>/dev/null; then PYTHON=$(command -v "$c"); break; fi
  done
fi
[ -n "$PYTHON" ] || die "no python3 with PyTorch (import torch failed): install it, or set PYTHON"

# The GPU.
fake=()
if [ "$smoke" = 1 ]; then
  gpu="none: --smoke (tiny models on the CPU, admitted on a simulated 16 GiB GPU)"
  fake=(--fake-gpus 1x16GiB)
else
  if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
    msg="no NVIDIA GPU found (nvidia-smi is missing or sees none): run it on the GPU machine, or --smoke here"
    if [ -n "${MAKELEVEL:-}" ]; then echo "gpu-check: skipped: $msg"; exit 0; fi
    die "$msg"
  fi
  gpu=$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1 |
        awk -F', ' '{print $1 ", driver " $2 ", " $3}')
  "$PYTHON" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)' ||
    die "PyTorch ($PYTHON) sees no CUDA device though nvidia-smi does: install a CUDA build of torch"
fi
torch_version=$("$PYTHON" -c 'import torch; print(torch.__version__)')

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
smokeflag=()
[ "$smoke" = 1 ] && smokeflag=(--smoke)
start=$SECONDS
budget=570 # seconds: the check must end within 10 minutes

# Does this build pack by progress? check refuses gpu-sharing: progress until it is wired.
printf 'tasks:\n  - parallel-tasks:\n      - {cmd: "true", gpu-memory: 1GiB, gpu-sharing: progress}\n' > "$work/probe.yml"
if "$RUNALL" check "$work/probe.yml" >/dev/null 2>"$work/probe.err"; then
  modes="one memory progress"
else
  modes="one memory"
fi

# taskfile KIND MODE STEPS MEM: the sweep of one kind, run one way.
taskfile() {
  local kind=$1 mode=$2 steps=$3 mem=$4 parallel=$trials sharing=""
  [ "$mode" = one ] && parallel=1
  [ "$mode" = progress ] && sharing="    gpu-sharing: progress"
  cat <<YML
config:
  max-parallel-commands: $parallel
  stop-on-failure: false
tasks:
  - name: $kind
    gpu-memory: ${mem}MiB
$sharing
    parallel-tasks:
      - name: $kind-<replace>
        cmd: "$PYTHON $here/gpu_trial.py --kind $kind --steps $steps ${smokeflag[*]} --out $work/$kind-$mode-<replace>.json"
        for-each: [$(seq -s ', ' 1 "$trials")]
YML
}

# field FILE KEY: a number from a trial's JSON.
field() { "$PYTHON" -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"; }

rows=()
for kind in $kinds; do
  # Calibrate: the rate alone and the memory held, so that a trial takes about SECONDS.
  "$PYTHON" "$here/gpu_trial.py" --kind "$kind" --calibrate "$seconds" "${smokeflag[@]}" --out "$work/cal-$kind.json" >/dev/null 2>&1 ||
    die "the $kind trial failed to calibrate: run $PYTHON $here/gpu_trial.py --kind $kind --calibrate 2 to see why"
  rate=$(field "$work/cal-$kind.json" rate)
  peak=$(field "$work/cal-$kind.json" peak_reserved)
  steps=$("$PYTHON" -c "print(max(10, int(float('$rate') * $seconds)))")
  mem=$("$PYTHON" -c "print(1024 + int($peak * 1.25) // 2**20)") # its peak, a quarter more, and 1 GiB of context
  row="$kind $steps $mem"
  for mode in $modes; do
    left=$((budget - (SECONDS - start)))
    [ "$left" -gt 20 ] || { row="$row over-budget"; continue; }
    taskfile "$kind" "$mode" "$steps" "$mem" > "$work/$kind-$mode.yml"
    t0=$("$PYTHON" -c 'import time; print(time.time())')
    if timeout "$left" "$RUNALL" "${fake[@]}" --output plain --log-dir "$work/logs" "$work/$kind-$mode.yml" > "$work/$kind-$mode.log" 2>&1; then
      t1=$("$PYTHON" -c 'import time; print(time.time())')
      row="$row $("$PYTHON" -c "print(f'{$t1 - $t0:.1f}')")"
    else
      row="$row failed"
      echo "gpu-check: $kind packed by $mode failed; its output:" >&2
      tail -20 "$work/$kind-$mode.log" >&2
    fi
  done
  rows+=("$row")
done

progress_note=""
if [[ $modes != *progress* ]]; then
  progress_note="not available in this build ($(head -1 "$work/probe.err" | sed -E 's/^runall: [^ ]*:[0-9]+:[0-9]+: //' | cut -c1-80)...)"
fi
# The table: makespans, each one's speed-up over one at a time, and the median rate of each
# kind's trials in each run (alone, packed by memory, by progress).
"$PYTHON" - "$work" "$gpu" "$("$RUNALL" --version 2>&1 | head -1)" "$torch_version" "$modes" "$progress_note" "$trials" "${rows[@]}" <<'PY'
import glob, json, statistics, sys
work, gpu, runall, torch, modes, note, trials = sys.argv[1:8]
modes = modes.split()
print(f"gpu-check on {gpu}; {runall}; PyTorch {torch}; {trials} trials of each kind")
def rate(kind, mode):
    rs = [json.load(open(f))["rate"] for f in glob.glob(f"{work}/{kind}-{mode}-*.json")]
    return f"{statistics.median(rs):.2f}" if rs else "-"
names = {"one": "alone", "memory": "by memory", "progress": "by progress"}
head = ["kind", "steps", "gpu-memory", "one at a time", "by memory", "by progress"] + [f"it/s {names[m]}" for m in modes]
lines = []
for row in sys.argv[8:]:
    kind, steps, mem, *spans = row.split()
    span = dict(zip(modes, spans))
    def cell(m):
        s = span.get(m)
        if s is None:
            return note.split(" (")[0] if m == "progress" else "-"
        try:
            x = float(span["one"]) / float(s)
            return f"{s} s" if m == "one" else f"{s} s ({x:.2f}x)"
        except (KeyError, ValueError, ZeroDivisionError):
            return s
    lines.append([kind, steps, f"{mem} MiB", cell("one"), cell("memory"), cell("progress")] + [rate(kind, m) for m in modes])
print("| " + " | ".join(head) + " |")
print("|" + "---|" * len(head))
for l in lines:
    print("| " + " | ".join(l) + " |")
if note:
    print(f"packed by progress: {note}")
PY
echo "gpu-check: done in $((SECONDS - start)) s"
