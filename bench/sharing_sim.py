#!/usr/bin/env python3
"""Packing by measured progress against one at a time and packing by memory, on simulated
GPUs that share compute as real ones do (issue 36 point 5; docs/benchmarks.md).

Four sweeps of 24 fake-alloc trials on two simulated 32 GiB GPUs: light (busy 0.2: the GPU
computes a fifth of each step), medium (0.5), heavy (1.0) and mixed (eight of each, heavy
written first). Each sweep runs three ways side by side, at the same time, each on simulated
GPUs of its own (no run sees another's processes):

  one at a time   each trial declares 20 GiB, so a 32 GiB GPU holds one (max-parallel 1 a GPU)
  by memory       gpu-sharing: memory (the default), 4 GiB declared: up to 7 a GPU
  by progress     gpu-sharing: progress, 4 GiB declared

and prints each one's makespan beside the simulation's own bound: the GPUs' total busy time
(each trial's busy share times its time alone) spread evenly over them, or the longest trial
alone, whichever is larger; and beside the bound with the model's switching cost in it (each
trial's GPU time at its kind's best packing, spread the same way: model_bound). Trials are STEPS steps of STEP seconds alone (environment).
ISOLATION=mps runs every sweep under gpu-isolation: mps (runall's simulated MPS daemons: kernels
overlap, no switching cost, so the two bounds are one); CLASSES=mixed (names, comma-separated)
runs only those sweeps.

    RUNALL=./runall python3 bench/sharing_sim.py
    RUNALL=./runall ISOLATION=mps CLASSES=mixed python3 bench/sharing_sim.py
"""
import itertools, os, sys, tempfile, threading

from benchlib import run_file

STEPS = int(os.environ.get("STEPS", "100"))
STEP = float(os.environ.get("STEP", "0.06"))
GPUS = "32GiB,32GiB"
ISOLATION = os.environ.get("ISOLATION", "none")
CLASSES = [
    ("light", [("light", 0.2, 24)]),
    ("medium", [("medium", 0.5, 24)]),
    ("heavy", [("heavy", 1.0, 24)]),
    ("mixed", [("heavy", 1.0, 8), ("medium", 0.5, 8), ("light", 0.2, 8)]),
]
if os.environ.get("CLASSES"):
    CLASSES = [c for c in CLASSES if c[0] in os.environ["CLASSES"].split(",")]
WAYS = [("one at a time", "memory", 20), ("by memory", "memory", 4), ("by progress", "progress", 4)]


def sweep(kinds, sharing, declare):
    """A sweep of the kinds (name, busy, count), each kind a for-each task of its own (its
    own group: gpu-sharing: progress learns a rate alone per group)."""
    lines = ["config:", "  max-parallel-commands: 24", "  stop-on-failure: false", f"  gpu-sharing: {sharing}",
             f"  gpu-isolation: {ISOLATION}", "tasks:", "  - name: sweep", "    parallel-tasks:"]
    for name, busy, n in kinds:
        lines += [f"      - name: {name}-<replace>", f"        for-each: [{', '.join(str(i) for i in range(1, n + 1))}]",
                  f"        gpu-memory: {declare}GiB",
                  f"        cmd: runall fake-alloc --size 3GiB --ramp 0 --release-lag 0 --train-steps {STEPS}"
                  f" --step-time {int(STEP * 1000)}ms --busy {busy}"]
    return "\n".join(lines) + "\n"


def bound(kinds):
    alone = STEPS * STEP
    busy = sum(b * alone * n for _, b, n in kinds)
    return max(busy / 2, alone)


SWITCH = 0.25 if ISOLATION == "none" else 0  # gpu/gpusim's SwitchCost: what each process beyond the first adds (none under MPS)
MOST = 7  # 4 GiB declared: the most trials a 32 GiB GPU holds


def stretch(busies):
    """How many times longer each step takes with processes of these busy shares on one
    simulated GPU (gpu/gpusim/compute.go's Stretch; no switching cost under MPS, SM shares 1)."""
    n = len(busies)
    return max(1.0, sum(busies) * (1 + SWITCH * (n - 1)))


def model_bound(kinds):
    """The bound with the model's switching cost in it: each trial's GPU time at the packing
    of its own kind that takes least of it (n of them at a time, each step stretched), spread
    evenly over the two GPUs, or the longest trial alone. No mix of kinds takes less GPU time
    for what it runs (checked over every mix of up to MOST trials: mixes_gain_nothing)."""
    alone = STEPS * STEP
    total = sum(n * alone * per_trial(b) for _, b, n in kinds)
    return max(total / 2, alone)


def per_trial(busy):
    """A trial's GPU time at its kind's best packing, in times its time alone."""
    return min(stretch([busy] * n) / n for n in range(1, MOST + 1))


def mixes_gain_nothing(kinds):
    """Whether no mix of the kinds does more per second of GPU time than each kind packed
    by itself, which makes model_bound a bound for any placement."""
    busies = [b for _, b, _ in kinds]
    for n in range(1, MOST + 1):
        for mix in itertools.combinations_with_replacement(busies, n):
            if sum(per_trial(b) for b in mix) / stretch(list(mix)) > 1 + 1e-9:
                return False
    return True


def main():
    work = tempfile.mkdtemp(prefix="runall-sharing-sim-")
    print(f"24 trials of {STEPS} steps of {STEP * 1000:.0f} ms ({STEPS * STEP:.1f} s alone) on two simulated 32 GiB GPUs, "
          f"gpu-isolation: {ISOLATION}; "
          f"load average before: {os.getloadavg()[0]:.1f}\n")
    print("| sweep | one at a time (s) | by memory (s) | by progress (s) | bound (s) | bound with switching (s) | progress vs the better other | progress vs bound | progress vs bound with switching | most at once by progress | sharing's own summary |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for label, kinds in CLASSES:
        got = {}

        def one(way, sharing, declare):
            got[way] = run_file(sweep(kinds, sharing, declare), GPUS, work)

        threads = [threading.Thread(target=one, args=w) for w in WAYS]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        m = {w: got[w]["makespan"] for w, _, _ in WAYS}
        better = min(m["one at a time"], m["by memory"])
        b, mb = bound(kinds), model_bound(kinds)
        if not mixes_gain_nothing(kinds):
            print(f"({label}: a mix of kinds beats each kind packed alone: the bound with switching is no bound)")
        failed = sum(got[w]["failed"] for w, _, _ in WAYS)
        summary = got["by progress"].get("sharing", {}).get("summary", "")
        most = got["by progress"].get("sharing_most", "")
        print(f"| {label} | {m['one at a time']:.1f} | {m['by memory']:.1f} | {m['by progress']:.1f} | {b:.1f} | {mb:.1f} | "
              f"{100 * (m['by progress'] / better - 1):+.0f}% | {100 * (m['by progress'] / b - 1):+.0f}% | "
              f"{100 * (m['by progress'] / mb - 1):+.0f}% | {most} | {summary} |"
              + (f" ({failed} failed)" if failed else ""), flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
