"""The fault matrix (issue 44, point 7): 40 trials of runall fake-train with checkpoints on
two simulated GPUs, of which 2 hang silently, 1 hangs printing, 1 crash-loops, 1 diverges,
2 slow down threefold and 33 are healthy; run side by side, in one invocation, by this
build (hang detection, crash loops ended) and by main's build before it (the merge base,
built from `git archive`), which can only end a hung trial with a timeout: it gets the same
sweep with a timeout of twice a healthy trial's time, the best a user can do today. Both
allow retries: 5. The hang floor is set low by hand (hang-floor: 2s) so that the benchmark
runs in a minute or two; the default (15m) is for real training.

  python3 bench/faults.py            # from the repository root; needs go and git
  PEER=off python3 bench/faults.py   # the peer is this build with the issue's rules off
                                     # (hang-after, no-progress-restarts, diverged-on, fail-fast)
                                     # and the same timeout: for a base that has no fake-train

Figures: each trial's end by kind (status, classes of its attempts, time to its end), the
GPU-time lost to faults (the attempts of the faulty trials, and the failed attempts of the
others), the sweep's makespan."""
import json, os, subprocess, sys, tempfile, time
from datetime import datetime

EPOCHS, BATCHES, BATCH = 4, 5, 0.1  # a healthy trial: 20 steps of 100 ms, a checkpoint an epoch
HEALTHY_S = EPOCHS * BATCHES * BATCH
KINDS = (["hang-silent"] * 2 + ["hang-printing"] + ["crash-loop"] + ["diverges"] + ["slowed"] * 2
         + ["healthy"] * 33)
FAULT = {"hang-silent": "--hang-after 8", "hang-printing": "--hang-after 8 --hang-print",
         "crash-loop": "--crash-at 12", "diverges": "--nan-from 8", "slowed": "--slow-from 6 --slow-by 3",
         "healthy": ""}


RULES_OFF = "    hang-after: off\n    no-progress-restarts: off\n    diverged-on: off\n    fail-fast: off\n"


def taskfile(old):
    keys = f"    timeout: {2 * HEALTHY_S + 1:.0f}s\n" if old else "    hang-floor: 2s\n"
    if old and os.environ.get("PEER") == "off":
        keys += RULES_OFF
    trials = []
    for i, kind in enumerate(KINDS):
        trials.append(f"""      - name: t{i:02d}-{kind}
        checkpoint: ckpt/t{i:02d}
        cmd: runall fake-train --lr 0.01 --width 64 --epochs {EPOCHS} --batches {BATCHES} --batch-time {int(BATCH*1000)}ms --checkpoint ckpt/t{i:02d} --memory 1GiB {FAULT[kind]}
""")
    return f"""config:
  stop-on-failure: false
  max-parallel-commands: 8
tasks:
  - name: sweep
    retries: 5
    gpu-memory: 2GiB
{keys}    parallel-tasks:
{''.join(trials)}"""


def ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def run(binary, old, work):
    os.makedirs(work)
    with open(os.path.join(work, "tasks.yml"), "w") as f:
        f.write(taskfile(old))
    env = dict(os.environ, PATH=os.path.dirname(binary) + ":" + os.environ["PATH"], TERM="dumb",
               RUNALL_FAKE_GPU_STATE=os.path.join(work, "gpus"))
    start = time.time()
    p = subprocess.run([binary, "--fake-gpus", "2x16GiB", "--log-dir", "logs", "--results", "results.json", "tasks.yml"],
                       cwd=work, env=env, capture_output=True, text=True)
    makespan = time.time() - start
    if not os.path.exists(os.path.join(work, "results.json")):
        sys.exit(f"{binary}: no results (exit {p.returncode})\n{p.stdout[-3000:]}\n{p.stderr[-3000:]}")
    with open(os.path.join(work, "results.json")) as f:
        return json.load(f), makespan


def figures(res, makespan):
    rows, lost = {}, 0.0
    for t in res["tasks"]:
        kind = t["name"].split("-", 1)[1]
        atts = t.get("attempt_list") or []
        span = [ts(a["end"]) - ts(a["start"]) for a in atts if a.get("start") and a.get("end")]
        first, last = (min(ts(a["start"]) for a in atts), max(ts(a["end"]) for a in atts)) if atts else (0, 0)
        classes = ",".join(a.get("class") or "ok" for a in atts)
        if kind not in ("healthy", "slowed"):
            lost += sum(span)
        else:
            lost += sum(s for s, a in zip(span, atts) if a.get("class"))
        rows.setdefault(kind, []).append((t["status"], classes, last - first))
    return rows, lost, makespan


def main():
    root = subprocess.run(["git", "rev-parse", "--show-toplevel"], capture_output=True, text=True, check=True).stdout.strip()
    tmp = tempfile.mkdtemp(prefix="faults-bench-")
    # The peer: BASE (a commit before hang detection, e.g. 8ddfe15), else the merge base with main.
    base = os.environ.get("BASE") or subprocess.run(["git", "merge-base", "HEAD", "main"], cwd=root, capture_output=True, text=True,
                                                    check=True).stdout.strip()
    src = os.path.join(tmp, "old-src")
    os.makedirs(src)
    subprocess.run(f"git archive {base} | tar -x -C {src}", shell=True, cwd=root, check=True)
    bins = {}
    for name, where in (("new", root), ("old", src)):
        os.makedirs(os.path.join(tmp, name))
        bins[name] = os.path.join(tmp, name, "runall")
        if name == "old" and os.environ.get("PEER") == "off":
            bins[name] = bins["new"]
            continue
        subprocess.run(["go", "build", "-o", bins[name], "./cmd/runall"], cwd=where, check=True)
    out = {}
    for name in ("old", "new"):
        out[name] = figures(*run(bins[name], name == "old", os.path.join(tmp, name + "-run")))
    peer = "this build, the rules off" if os.environ.get("PEER") == "off" else base[:10]
    print(f"main's build: {peer} (timeout: {2 * HEALTHY_S + 1:.0f}s); this build: hang-after auto, hang-floor: 2s; both retries: 5")
    print("| trials | main's build: status (attempts' classes), time to end | this build: status (attempts' classes), time to end |")
    print("|---|---|---|")
    for kind in dict.fromkeys(KINDS):
        cells = []
        for name in ("old", "new"):
            rows = out[name][0].get(kind, [])
            statuses = sorted({f"{s} ({c})" for s, c, _ in rows}) if kind != "healthy" else sorted({s for s, _, _ in rows})
            ends = [d for _, _, d in rows]
            cells.append(f"{'; '.join(statuses)}, {min(ends):.1f}-{max(ends):.1f} s")
        print(f"| {len(out['old'][0].get(kind, []))}× {kind} | {cells[0]} | {cells[1]} |")
    print(f"| GPU-time lost to faults | {out['old'][1]:.0f} s | {out['new'][1]:.0f} s |")
    print(f"| makespan | {out['old'][2]:.1f} s | {out['new'][2]:.1f} s |")


if __name__ == "__main__":
    main()
