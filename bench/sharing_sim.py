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
alone, whichever is larger. Trials are STEPS steps of STEP seconds alone (environment).

    RUNALL=./runall python3 bench/sharing_sim.py
"""
import os, sys, tempfile, threading

from benchlib import run_file

STEPS = int(os.environ.get("STEPS", "100"))
STEP = float(os.environ.get("STEP", "0.06"))
GPUS = "32GiB,32GiB"
CLASSES = [
    ("light", [("light", 0.2, 24)]),
    ("medium", [("medium", 0.5, 24)]),
    ("heavy", [("heavy", 1.0, 24)]),
    ("mixed", [("heavy", 1.0, 8), ("medium", 0.5, 8), ("light", 0.2, 8)]),
]
WAYS = [("one at a time", "memory", 20), ("by memory", "memory", 4), ("by progress", "progress", 4)]


def sweep(kinds, sharing, declare):
    """A sweep of the kinds (name, busy, count), each kind a for-each task of its own (its
    own group: gpu-sharing: progress learns a rate alone per group)."""
    lines = ["config:", "  max-parallel-commands: 24", "  stop-on-failure: false", f"  gpu-sharing: {sharing}",
             "tasks:", "  - name: sweep", "    parallel-tasks:"]
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


def main():
    work = tempfile.mkdtemp(prefix="runall-sharing-sim-")
    print(f"24 trials of {STEPS} steps of {STEP * 1000:.0f} ms ({STEPS * STEP:.1f} s alone) on two simulated 32 GiB GPUs; "
          f"load average before: {os.getloadavg()[0]:.1f}\n")
    print("| sweep | one at a time (s) | by memory (s) | by progress (s) | bound (s) | progress vs the better other | progress vs bound | most at once by progress | sharing's own summary |")
    print("|---|---|---|---|---|---|---|---|---|")
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
        b = bound(kinds)
        failed = sum(got[w]["failed"] for w, _, _ in WAYS)
        summary = got["by progress"].get("sharing", {}).get("summary", "")
        most = got["by progress"].get("sharing_most", "")
        print(f"| {label} | {m['one at a time']:.1f} | {m['by memory']:.1f} | {m['by progress']:.1f} | {b:.1f} | "
              f"{100 * (m['by progress'] / better - 1):+.0f}% | {100 * (m['by progress'] / b - 1):+.0f}% | {most} | {summary} |"
              + (f" ({failed} failed)" if failed else ""), flush=True)
    print(f"\nload average after: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    sys.exit(main())
