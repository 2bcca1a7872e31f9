#!/usr/bin/env python3
"""GPU packing benchmark on simulated GPUs (docs/benchmarks.md).

Mixed workload: 24 trials needing 3-12 GiB, each ramping 1 s and holding 1-4 s, on 2x32 GiB.
Run three ways in the same run: runall's admission; one at a time; and max-parallel-commands
alone without admission (trials spread round-robin over the GPUs, as a user would by hand),
counting out-of-memory failures. Then the auto case: trials of unknown need on one device.
The first table, the other workloads and the auto case are measured for every profile of
PROFILES (benchlib: the realistic one, and the linear one the simulation first had), in the
same run; the rest on the realistic profile.

    RUNALL=./runall python3 bench/packing.py
    RUNALL_BEFORE=/path/to/older/runall   # also time that build's trials, seed by seed
Efficiency = lower bound / makespan; lower bound = max(sum(need x duration) / sum(capacity),
longest duration), with each trial's duration taken as its ramp + hold.
"""
import heapq, os, random, subprocess, sys, tempfile

from benchlib import GiB, PROFILES, RUNALL, _ts, fake_alloc, run_events, run_file


def workload(seed=7, n=24):
    rnd = random.Random(seed)
    return [(rnd.randint(3, 12), 1, rnd.randint(1, 4)) for _ in range(n)]  # (GiB, ramp, hold)


def task_file(trials, mode, max_parallel, order=None, profile="realistic"):
    lines = ["config:", f"  max-parallel-commands: {max_parallel}", "  stop-on-failure: false",
             "tasks:", "  - name: sweep"]
    if order:
        lines.append(f"    order: {order}")
    if mode == "auto":
        lines.append("    gpu-memory: auto  # the block's trials learn their need together")
    lines.append("    parallel-tasks:")
    for i, (gib, ramp, hold) in enumerate(trials):
        lines.append(f"      - name: trial{i:02d}")
        if mode == "gpu":
            lines.append(f"        gpu-memory: {gib}GiB")
        # Without admission nothing sets CUDA_VISIBLE_DEVICES: spread by hand, round-robin.
        dev = f"${{CUDA_VISIBLE_DEVICES:-{i % 2}}}"
        lines.append(f"        cmd: CUDA_VISIBLE_DEVICES={dev} {fake_alloc(gib, ramp, hold, profile)}")
    return "\n".join(lines) + "\n"


def predict(d):
    """The makespan runall check --simulate predicts for the task file in d from its history."""
    out = subprocess.run([RUNALL, "check", "--simulate", "--fake-gpus", "32GiB,32GiB", "--log-dir",
                          os.path.join(d, "logs"), os.path.join(d, "tasks.yml")],
                         capture_output=True, text=True, check=True).stdout
    line = next(l for l in out.splitlines() if l.startswith("Predicted makespan:"))
    return float(line.split(":")[1].strip().rstrip("s"))


def overhead(seed, work, runall=RUNALL, label=""):
    """One run of the workload of seed with marked commands; a table row of where time goes."""
    tr = workload(seed)
    text = task_file(tr, "gpu", 24).replace("cmd: CUDA", "cmd: echo go; CUDA")
    text = "\n".join(l + ("; echo done" if "fake-alloc" in l else "") for l in text.splitlines()) + "\n"
    at = {}
    for e in run_events(text, "32GiB,32GiB", work, runall):
        if "task" not in e:
            continue
        mark = {"start": "start", "end": "end"}.get(e["event"]) or {"go": "go", "done": "done"}.get(e.get("line"))
        if mark:
            at.setdefault(e["task"], {})[mark] = _ts(e["time"])
    med = lambda xs: sorted(xs)[len(xs) // 2]
    ms = lambda xs: f"{1000 * med(xs):.0f} / {1000 * max(xs):.0f}"
    pre = [v["go"] - v["start"] for v in at.values()]
    body = [v["done"] - v["go"] - sum(tr[int(k[5:])][1:]) for k, v in at.items()]
    post = [v["end"] - v["done"] for v in at.values()]
    ends = sorted(v["end"] for v in at.values())
    gaps = [s - max(e for e in ends if e <= s) for s in (v["start"] for v in at.values()) if ends[0] <= s]
    return (f"| {seed}{label} | {ms(pre)} | {1000 * med(body):.0f} | {1000 * med(post):.0f} | {ms(gaps)} | "
            f"{sum(g > 0.05 for g in gaps)} of {len(gaps)} |")


def run(trials, mode, max_parallel, gpus, work, profile="realistic"):
    args = ["--no-gpu"] if mode == "none" else []
    return run_file(task_file(trials, mode, max_parallel, profile=profile), gpus, work, args=args)


def ideal_greedy(trials, gpus=2, usable=32 * 0.95):
    """Simulates runall's policy with no overhead at all: file order with backfill, best fit,
    the default 5% margin, durations exactly ramp + hold. Not a measurement: the makespan this
    policy could reach on this workload, to tell the policy's limit from runall's overhead."""
    free, now, pending, running = [usable] * gpus, 0.0, list(range(len(trials))), []
    while pending or running:
        i = 0
        while i < len(pending):
            k = pending[i]
            fits = [d for d in range(gpus) if free[d] >= trials[k][0]]
            if not fits:
                i += 1
                continue
            d = min(fits, key=lambda d: free[d])
            free[d] -= trials[k][0]
            pending.pop(i)
            heapq.heappush(running, (now + trials[k][1] + trials[k][2], k, d))
        now, k, d = heapq.heappop(running)
        free[d] += trials[k][0]
    return now


def lower_bound(trials, capacity_gib):
    work = sum(g * (r + h) for g, r, h in trials)
    return max(work / capacity_gib, max(r + h for _, r, h in trials))


def main():
    work = tempfile.mkdtemp(prefix="runall-bench-")
    trials = workload()
    lb = lower_bound(trials, 64)
    print(f"Workload: {len(trials)} trials, {min(g for g,_,_ in trials)}-{max(g for g,_,_ in trials)} GiB, "
          f"ramp 1 s, hold 1-4 s, on 2x32 GiB simulated GPUs; lower bound {lb:.2f} s\n")
    print("| profile | mode | makespan (s) | efficiency | most at once | failed | OOM requeues |")
    print("|---|---|---|---|---|---|---|")
    for profile in PROFILES:
        for label, mode, mp in [("runall, GPU admission (max-parallel 24)", "gpu", 24),
                                ("one at a time (max-parallel 1)", "gpu", 1),
                                ("max-parallel 8 alone, no admission (--no-gpu)", "none", 8)]:
            r = run(trials, mode, mp, "32GiB,32GiB", work, profile)
            # Failed trials did less work than the lower bound counts: no efficiency for them.
            eff = f"{lb / r['makespan']:.2f}" if not r["failed"] else f"- ({r['failed']} trials lost to OOM)"
            print(f"| {profile} | {label} | {r['makespan']:.2f} | {eff} | {r['peak_running']} | "
                  f"{r['failed']} | {r['requeues']} |")
    ideal = ideal_greedy(trials)
    print(f"| - | *simulated*: the same policy with zero overhead | {ideal:.2f} | {lb / ideal:.2f} | | | |")

    seeds = [int(x) for x in os.environ.get("SEEDS", "1 2 3 4 5").split()]
    print(f"\nOther workloads of the same shape (seeds {seeds[0]}-{seeds[-1]}), runall with admission:\n")
    print("| seed | lower bound (s) | " + " | ".join(f"{p}: makespan (s), efficiency, failed" for p in PROFILES) +
          " | simulated policy limit |")
    print("|---|---|" + "---|" * len(PROFILES) + "---|")
    for seed in seeds:
        tr = workload(seed)
        lbs = lower_bound(tr, 64)
        cells = []
        for profile in PROFILES:
            r = run(tr, "gpu", 24, "32GiB,32GiB", work, profile)
            cells.append(f"{r['makespan']:.2f}, **{lbs / r['makespan']:.2f}**, {r['failed']}")
        print(f"| {seed} | {lbs:.2f} | " + " | ".join(cells) + f" | {lbs / ideal_greedy(tr):.2f} |")

    seeds = [int(x) for x in os.environ.get("ORDER_SEEDS", "1 2 3 4 5").split()]
    print(f"\nOrder: file order against longest-first, each run twice on the same log directory "
          f"(the first run has no history; the second has the durations the first recorded)\n")
    print("| seed | lower bound (s) | file order: 1st run | file order: 2nd run | longest-first: 1st run | "
          "longest-first: 2nd run | failed | OOM requeues | most overtaken (bound 24) | end-to-next-start gap, median (ms) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    means, predicted = {}, []
    for seed in seeds:
        tr = workload(seed)
        lbs = lower_bound(tr, 64)
        cells, failed, requeues, gaps, passed = [], 0, 0, [], 0
        for order in ("file", "longest-first"):
            d = tempfile.mkdtemp(dir=work)
            for nth in (1, 2):
                r = run_file(task_file(tr, "gpu", 24, order), "32GiB,32GiB", work, d=d)
                eff = lbs / r["makespan"]
                means.setdefault((order, nth), []).append(eff)
                cells.append(f"{r['makespan']:.2f} s, **{eff:.2f}**")
                failed, requeues = failed + r["failed"], requeues + r["requeues"]
                passed = max(passed, r["passed_over"])
                if r["gap"] is not None:
                    gaps.append(r["gap"])
            predicted.append((predict(d), r["makespan"]))
        gaps.sort()
        print(f"| {seed} | {lbs:.2f} | " + " | ".join(cells) +
              f" | {failed} | {requeues} | {passed} | {1000 * gaps[len(gaps) // 2]:.0f} |")
    mean = lambda k: sum(means[k]) / len(means[k])
    print(f"| mean | | {mean(('file', 1)):.3f} | {mean(('file', 2)):.3f} | "
          f"{mean(('longest-first', 1)):.3f} | {mean(('longest-first', 2)):.3f} | | | | |")

    print("\n`runall check --simulate` after each second run, against that run's measured makespan:\n")
    print("| seed | order | predicted (s) | measured (s) | error |")
    print("|---|---|---|---|---|")
    for i, (pred, real) in enumerate(predicted):
        print(f"| {seeds[i // 2]} | {('file', 'longest-first')[i % 2]} | {pred:.2f} | {real:.2f} | {100 * (pred - real) / real:+.0f}% |")

    print("\nWhere a trial's time goes (each seed's workload once, longest-first, first run): each command "
          "echoes a line before and after `runall fake-alloc` (shell builtins, no process), and the "
          "JSON events' times split a trial's run: runall's start to the shell's first line, "
          "fake-alloc's run beyond its ramp + hold, its last line to runall's end.\n")
    print("| seed | start to shell (ms, median / max) | fake-alloc beyond ramp + hold (ms) | shell's end to runall's end (ms) "
          "| end-to-next-start gap (ms, median / max) | gaps over 50 ms |")
    print("|---|---|---|---|---|---|")
    before = os.environ.get("RUNALL_BEFORE")  # another build, run beside this one, seed by seed
    for seed in seeds:
        print(overhead(seed, work))
        if before:
            print(overhead(seed, work, os.path.abspath(before), " (RUNALL_BEFORE)"))

    auto = [(6, 1, 8)] * 12
    lb1 = lower_bound(auto, 32)
    print(f"\nAuto case: {len(auto)} trials of unknown need (each uses 6 GiB, ramp 1 s, hold 8 s) "
          f"on one 32 GiB simulated GPU, `gpu-memory: auto`; lower bound {lb1:.2f} s\n")
    print("| profile | mode | makespan (s) | most at once | learned need | failed |")
    print("|---|---|---|---|---|---|")
    for profile in PROFILES:
        for label, mode, mp in [("runall, gpu-memory: auto", "auto", 12), ("one at a time", "gpu", 1)]:
            r = run(auto, mode, mp, "32GiB", work, profile)
            learned = ", ".join(f"{v / GiB:.2f} GiB" for v in r["learned"].values()) or "-"
            print(f"| {profile} | {label} | {r['makespan']:.2f} | {r['peak_running']} | {learned} | {r['failed']} |")


if __name__ == "__main__":
    sys.exit(main())
