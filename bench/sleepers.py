#!/usr/bin/env python3
"""Trials that do not slow each other, packed by progress against packed by memory (issue 42
point 4; docs/benchmarks.md).

Eight trials of 10 s that only sleep and print a tqdm bar (100 steps of 0.1 s), each beside a
GPU process that holds 1 GiB and runs no kernel (`runall fake-alloc`, 0% utilisation), on one
simulated 32 GiB GPU. The sweep runs two ways side by side, at the same time, each on
simulated GPUs of its own: gpu-sharing: memory (all eight fit at once) and gpu-sharing:
progress. BEFORE=path/to/an/older/runall adds a third, progress under that binary, in the same
round. Each round is repeated REPEAT times (default 3); the table gives each round's makespans
(first start to last end), the most trials at once, and the progress run's summary line.

    RUNALL=./runall python3 bench/sleepers.py
    RUNALL=./runall BEFORE=/tmp/runall-main python3 bench/sleepers.py
"""
import os, shutil, statistics, sys, tempfile, threading

import benchlib
from benchlib import run_file

PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
SLEEPER = ("import time, tqdm\n"
           "for _ in tqdm.tqdm(range(100), mininterval=0.1):\n"
           "    time.sleep(0.1)\n")


def sweep(sharing, script):
    return f"""config:
  max-parallel-commands: 8
  gpu-sharing: {sharing}
tasks:
  - name: sweep
    parallel-tasks:
      - name: sleep-<replace>
        for-each: [1, 2, 3, 4, 5, 6, 7, 8]
        gpu-memory: 2GiB
        cmd: runall fake-alloc --size 1GiB --ramp 0 --release-lag 0 --hold 600s & {PYTHON} {script}; s=$?; kill $!; exit $s
"""


def main():
    work = tempfile.mkdtemp(prefix="runall-sleepers-")
    script = os.path.join(work, "sleeper.py")
    with open(script, "w") as f:
        f.write(SLEEPER)
    ways = [("by memory", "memory", benchlib.RUNALL), ("by progress", "progress", benchlib.RUNALL)]
    if os.environ.get("BEFORE"):
        ways.append(("by progress, BEFORE", "progress", os.path.abspath(os.environ["BEFORE"])))
    repeat = int(os.environ.get("REPEAT", "3"))
    print(f"8 sleepers of 10 s beside an idle 1 GiB GPU process each, one simulated 32 GiB GPU; "
          f"load average before: {os.getloadavg()[0]:.1f}\n")
    print("| round | " + " | ".join(f"{w} (s)" for w, _, _ in ways) + " | " +
          " | ".join(f"most at once {w}" for w, _, _ in ways) + " | progress vs memory | progress's summary |")
    print("|---" * (2 * len(ways) + 3) + "|")
    ratios = []
    for rnd in range(1, repeat + 1):
        got = {}

        def one(way, sharing, binary):
            got[way] = run_file(sweep(sharing, script), "32GiB", work, runall=binary)

        threads = [threading.Thread(target=one, args=w) for w in ways]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        m = {w: got[w]["makespan"] for w, _, _ in ways}
        ratios.append(m["by progress"] / m["by memory"])
        summary = got["by progress"].get("sharing", {}).get("summary", "")
        print(f"| {rnd} | " + " | ".join(f"{m[w]:.1f}" for w, _, _ in ways) + " | " +
              " | ".join(str(got[w]["peak_running"]) for w, _, _ in ways) +
              f" | {100 * (ratios[-1] - 1):+.0f}% | {summary} |", flush=True)
    print(f"\nmedian progress vs memory: {100 * (statistics.median(ratios) - 1):+.0f}%; "
          f"load average after: {os.getloadavg()[0]:.1f}")
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
