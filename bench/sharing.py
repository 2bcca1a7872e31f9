#!/usr/bin/env python3
"""Per-trial GPU memory while trials share a device (docs/benchmarks.md), on simulated GPUs,
in each of the driver's pid modes (RUNALL_FAKE_HOST_PIDS: runall's pids, the host's, none):

  1. an under-declared sweep against the same sweep declared right, and one at a time;
  2. eight trials, each a gpu-memory: auto group of its own, against one at a time;
  3. each trial's peak_gpu_memory against what it really claimed, while sharing: in the
     declared runs of 1, and in runs where every trial declares 9 GiB (needs that do not
     match use, where a share of the device's growth cannot be right).

Each table is measured for every profile of PROFILES (benchlib: the realistic one, and the
linear one the simulation first had), in the same run.

    RUNALL=./runall python3 bench/sharing.py
"""
import os, sys, tempfile

from benchlib import GiB, PROFILES, fake_alloc, run_file

MODES = [("pids are runall's", ""), ("pids are the host's", "1"), ("no pids", "none")]
SIZES = [3, 6, 9] * 4  # GiB: the H100 sweep's 7, 14 and 22 GiB scaled to a 32 GiB device
RAMP, HOLD = 1, 4


def sweep(declare, profile):
    """Twelve trials of SIZES; declare(size) is what each declares."""
    lines = ["config:", "  max-parallel-commands: 12", "  stop-on-failure: false", "tasks:",
             "  - name: sweep", "    parallel-tasks:"]
    for i, gib in enumerate(SIZES):
        lines += [f"      - name: trial{i:02d}-{gib}g", f"        gpu-memory: {declare(gib)}",
                  f"        cmd: {fake_alloc(gib, RAMP, HOLD, profile)}"]
    return "\n".join(lines) + "\n"


def autos(n, max_parallel, profile):
    lines = ["config:", f"  max-parallel-commands: {max_parallel}", "tasks:", "  - name: sweep",
             "    parallel-tasks:"]
    for i in range(n):
        lines += [f"      - name: auto{i}", "        gpu-memory: auto",
                  f"        cmd: {fake_alloc(6, RAMP, HOLD, profile)}"]
    return "\n".join(lines) + "\n"


def peak_error(tasks):
    errs = []
    for t in tasks:
        gib = int(t["name"].split("-")[1].rstrip("g"))
        errs.append(abs(t.get("peak_gpu_memory", 0) - gib * GiB) / (gib * GiB))
    return max(errs), sum(errs) / len(errs), {t.get("peak_gpu_memory_source", "") for t in tasks}


def main():
    work = tempfile.mkdtemp(prefix="runall-bench-")
    print(f"1. Twelve trials of 3, 6 and 9 GiB (ramp {RAMP} s, hold {HOLD} s) on one simulated 32 GiB GPU\n")
    print("| profile | driver's pids | run | makespan (s) | vs declared | most at once | failed | OOM requeues | needs at the end vs own peak |")
    print("|---|---|---|---|---|---|---|---|---|")
    declared_runs = {}
    for profile in PROFILES:
        for label, pids in MODES:
            env = {"RUNALL_FAKE_HOST_PIDS": pids}
            decl = run_file(sweep(lambda g: f"{g}GiB", profile), "32GiB", work, env)
            declared_runs[profile, label] = decl
            under = run_file(sweep(lambda g: "1.5GiB", profile), "32GiB", work, env)
            for name, r in [("declared right", decl), ("all declare 1.5 GiB (2-6x under)", under)]:
                print(f"| {profile} | {label} ({r['pids']}) | {name} | {r['makespan']:.2f} | {r['makespan'] / decl['makespan']:.2f}x | "
                      f"{r['peak_running']} | {r['failed']} | {r['requeues']} | {need_ratio(r['tasks'])} |")
        one = run_file(sweep(lambda g: f"{g}GiB", profile).replace("max-parallel-commands: 12", "max-parallel-commands: 1"), "32GiB", work)
        print(f"| {profile} | - | one at a time | {one['makespan']:.2f} | | 1 | {one['failed']} | 0 | |")

    print(f"\n2. Eight trials, each its own `gpu-memory: auto` group (6 GiB, ramp {RAMP} s, hold {HOLD} s), one 32 GiB GPU\n")
    print("| profile | driver's pids | run | makespan (s) | vs one at a time | most at once | learned | failed |")
    print("|---|---|---|---|---|---|---|---|")
    for profile in PROFILES:
        alone = run_file(autos(8, 1, profile), "32GiB", work)
        for label, pids in MODES:
            r = run_file(autos(8, 8, profile), "32GiB", work, {"RUNALL_FAKE_HOST_PIDS": pids})
            learned = sorted(v / GiB for v in r["learned"].values())
            span = f"{learned[0]:.2f}-{learned[-1]:.2f} GiB" if learned else "-"
            print(f"| {profile} | {label} ({r['pids']}) | 8 auto groups | {r['makespan']:.2f} | {r['makespan'] / alone['makespan']:.2f}x | "
                  f"{r['peak_running']} | {span} | {r['failed']} |")
        print(f"| {profile} | - | one at a time | {alone['makespan']:.2f} | 1.00x | 1 | | {alone['failed']} |")

    print("\n3. Each trial's peak_gpu_memory against its claim, while sharing\n")
    print("| profile | driver's pids | needs | most trials sharing | largest error | mean error | source |")
    print("|---|---|---|---|---|---|---|")
    for profile in PROFILES:
        for label, pids in MODES:
            generous = run_file(sweep(lambda g: "9GiB", profile), "32GiB", work, {"RUNALL_FAKE_HOST_PIDS": pids})
            for needs, r in [("declared right", declared_runs[profile, label]), ("all declare 9 GiB", generous)]:
                worst, mean, src = peak_error(r["tasks"])
                print(f"| {profile} | {label} | {needs} | {r['peak_running']} | {100 * worst:.1f}% | {100 * mean:.1f}% | {', '.join(sorted(src))} |")


def need_ratio(tasks):
    """The range of the need each requeued trial ended with, over its own claim: how far a
    need raised after running out of memory stays above what the trial uses."""
    ratios = sorted(t.get("gpu_memory", 0) / (int(t["name"].split("-")[1].rstrip("g")) * GiB)
                    for t in tasks if t.get("oom_requeues", 0) > 0)
    return f"{ratios[0]:.2f}-{ratios[-1]:.2f}x ({len(ratios)} requeued)" if ratios else "-"


if __name__ == "__main__":
    sys.exit(main())
