#!/usr/bin/env python3
"""Packing benchmark, two builds side by side (docs/benchmarks.md): each seed's workload of
bench/packing.py run with GPU admission (max-parallel 24, 2x32 GiB simulated) by the build
before a change and the build after it, alternating which goes first, ROUNDS times.

    RUNALL_BEFORE=/path/to/old/runall RUNALL=/path/to/new/runall ROUNDS=2 python3 bench/packing_ab.py

PROFILE picks how the simulated trials hold memory (benchlib.PROFILE_ARGS; realistic by
default). A build from before fake-alloc had profiles (173fe31 and older) knows the linear
one only, with no flag for it: OLD_FAKE_ALLOC=1 PROFILE=linear compares it with a newer
build on the same simulation.
"""
import os, statistics, sys, tempfile

import benchlib
from packing import lower_bound, run, workload


def main():
    builds = [("before", os.path.abspath(os.environ["RUNALL_BEFORE"])), ("after", os.path.abspath(benchlib.RUNALL))]
    rounds = int(os.environ.get("ROUNDS", "2"))
    profile = os.environ.get("PROFILE", "realistic")
    if profile not in benchlib.PROFILE_ARGS:
        sys.exit(f"PROFILE={profile}: want one of {', '.join(benchlib.PROFILE_ARGS)}")
    old_fake_alloc = os.environ.get("OLD_FAKE_ALLOC") == "1"
    seeds = [1, 2, 3, 4, 5, 7]
    work = tempfile.mkdtemp()
    eff = {name: [] for name, _ in builds}
    print("| seed | lower bound (s) | " + " | ".join(f"{n}: makespan (s), efficiency" for n, _ in builds) + " | failed | OOM requeues |")
    print("|---|---|" + "---|" * len(builds) + "---|---|")
    for r in range(rounds):
        for i, seed in enumerate(seeds):
            trials = workload(seed)
            lb = lower_bound(trials, 64)
            order = builds if (r + i) % 2 == 0 else builds[::-1]
            cells, failed, requeues = {}, 0, 0
            for name, path in order:
                benchlib.RUNALL = path
                # "realistic" passes no flag: an old fake-alloc's only (linear) behaviour.
                p = "realistic" if name == "before" and old_fake_alloc else profile
                res = run(trials, "gpu", 24, "32GiB,32GiB", work, p)
                e = lb / res["makespan"]
                eff[name].append(e)
                cells[name] = f"{res['makespan']:.2f}, **{e:.2f}**"
                failed, requeues = failed + res["failed"], requeues + res["requeues"]
            print(f"| {seed} | {lb:.2f} | " + " | ".join(cells[n] for n, _ in builds) + f" | {failed} | {requeues} |")
    print("| mean | | " + " | ".join(f"{statistics.mean(eff[n]):.3f}" for n, _ in builds) + " | | |")


if __name__ == "__main__":
    sys.exit(main())
