#!/usr/bin/env python3
"""Admission orders compared with zero overhead, over many random workloads (docs/gpu.md).

Each workload: 24 trials needing 3-12 GiB, each taking 1 s of ramp + 1-4 s of hold, on two
32 GiB GPUs; runall keeps its default 5% margin free, so 30.4 GiB of each device can be
used, while the lower bound counts the full 64 GiB (the margin is runall's cost). Every
policy admits greedily: whenever a trial ends it walks the queue in the policy's order and
starts what fits, on the device where it fits best (least room left), as runall does; the
first trial in line may be overtaken at most LIMIT times, then it holds the line.

An order that uses durations sees them as earlier runs recorded them: exact, or off by a
random factor (ERROR=0.25: each recorded duration is the true one times 0.75-1.25).

    python3 bench/packsim.py            # 200 workloads, seeds 1-200
    N=40 python3 bench/packsim.py
"""
import heapq, os, random, statistics

GPUS, SIZE, MARGIN = 2, 32.0, 0.05
USABLE = SIZE * (1 - MARGIN)


def workload(seed, n=24):
    rnd = random.Random(seed)
    return [(rnd.randint(3, 12), 1 + rnd.randint(1, 4)) for _ in range(n)]  # (GiB, seconds)


def lower_bound(trials):
    return max(sum(g * d for g, d in trials) / (GPUS * SIZE), max(d for _, d in trials))


def simulate(trials, order, limit):
    """Makespan of greedy best-fit admission offering trials in `order` (indices)."""
    free, now, pending, running, overtaken = [USABLE] * GPUS, 0.0, list(order), [], {}
    while pending or running:
        i = 0
        while i < len(pending):
            k = pending[i]
            fits = [d for d in range(GPUS) if free[d] >= trials[k][0]]
            if not fits:
                if i == 0 and overtaken.get(k, 0) >= limit:
                    break
                i += 1
                continue
            d = min(fits, key=lambda d: free[d])
            free[d] -= trials[k][0]
            for w in pending[:i]:
                overtaken[w] = overtaken.get(w, 0) + 1
            pending.pop(i)
            heapq.heappush(running, (now + trials[k][1], k, d))
        now, k, d = heapq.heappop(running)
        free[d] += trials[k][0]
        while running and running[0][0] == now:  # everything ending at once frees at once
            _, k, d = heapq.heappop(running)
            free[d] += trials[k][0]
    return now


def searched(trials, seen, err, limit, rnd, iters=150, samples=6):
    """An order found by local search (swaps from LPT), judged on copies of the workload whose
    durations are the recorded ones off by up to err, as the real ones may be."""
    worlds = [[(g, s * (1 + rnd.uniform(-err, err))) for (g, _), s in zip(trials, seen)]
              for _ in range(samples if err else 1)]
    score = lambda o: statistics.mean(simulate(w, o, limit) for w in worlds)
    best = sorted(range(len(trials)), key=lambda k: (-seen[k], -trials[k][0]))
    bs = score(best)
    for _ in range(iters):
        o = best[:]
        i, j = rnd.randrange(len(o)), rnd.randrange(len(o))
        o[i], o[j] = o[j], o[i]
        if (s := score(o)) <= bs:
            best, bs = o, s
    return best


def runall_order(trials, seen, same=0.10):
    """runner/order.go: longest first; a run of durations within 10% of its longest is a tie,
    broken by the larger need (recorded durations vary from run to run)."""
    idx, out, i = sorted(range(len(trials)), key=lambda k: -seen[k]), [], 0
    while i < len(idx):
        j = i + 1
        while j < len(idx) and seen[idx[j]] >= seen[idx[i]] * (1 - same):
            j += 1
        out += sorted(idx[i:j], key=lambda k: -trials[k][0])
        i = j
    return out


def orders(trials, seen, err, limit, rnd):
    """The policies: each an order of trial indices. seen is the recorded durations."""
    idx = list(range(len(trials)))
    need = lambda k: trials[k][0]
    return {
        "file order (runall before; first run)": idx,
        "largest need first": sorted(idx, key=lambda k: -need(k)),
        "need x duration first": sorted(idx, key=lambda k: -need(k) * seen[k]),
        "longest first (LPT), ties to larger need": sorted(idx, key=lambda k: (-seen[k], -need(k))),
        "runall: LPT, durations within 10% as ties, larger need first": runall_order(trials, seen),
        "LPT, ties to smaller need": sorted(idx, key=lambda k: (-seen[k], need(k))),
        "LPT within need halves (large first)": sorted(idx, key=lambda k: (need(k) <= 7, -seen[k])),
        "shortest first": sorted(idx, key=lambda k: (seen[k], -need(k))),
        "searched: 150 swaps from LPT, judged on recorded durations ± the error": searched(trials, seen, err, limit, rnd),
    }


def main():
    n = int(os.environ.get("N", "200"))
    limits = [int(x) for x in os.environ.get("LIMITS", "4").split()]
    errors = [float(x) for x in os.environ.get("ERRORS", "0 0.03 0.25").split()]
    cols = [(e, l) for e in errors for l in limits]
    table = {}
    for seed in range(1, n + 1):
        trials = workload(seed)
        lb = lower_bound(trials)
        for e, l in cols:
            rnd = random.Random(seed * 1000 + int(e * 100))
            seen = [d * (1 + rnd.uniform(-e, e)) for _, d in trials]
            for name, order in orders(trials, seen, e, l, rnd).items():
                table.setdefault(name, {}).setdefault((e, l), []).append(lb / simulate(trials, order, l))
    head = " | ".join(f"error {int(e * 100)}%, overtaken ≤ {l}" for e, l in cols)
    print(f"Mean efficiency (min-max) over {n} workloads, zero overhead, full 64 GiB in the bound\n")
    print(f"| order | {head} |")
    print("|---" * (len(cols) + 1) + "|")
    for name, by in table.items():
        cells = [f"{statistics.mean(v):.3f} ({min(v):.2f}-{max(v):.2f})" for v in (by[c] for c in cols)]
        print(f"| {name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
