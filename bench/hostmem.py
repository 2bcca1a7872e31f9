#!/usr/bin/env python3
"""Host memory admission (docs/benchmarks.md): one sweep in a real memory cgroup with a 1 GiB
limit, six trials that each take 400 MiB of host memory over two seconds and hold it two,
max-parallel-commands 6, run four ways in one session:

  1. host admission: memory: 450MiB;
  2. memory: auto (learned from the first trial, then admitted by it);
  3. under-declared: memory: 100MiB (OOM kills recognised, trials requeued with a raised need);
  4. one trial at a time (max-parallel-commands: 1, no host need);
  5. no admission (no host need): the kernel's OOM killer finds the limit.

Needs root and a cgroup v1 memory controller (or v2 with memory delegated):

    make build && sudo RUNALL=$PWD/runall python3 bench/hostmem.py
"""
import json, os, subprocess, sys, tempfile, time

from benchlib import _ts

RUNALL = os.environ.get("RUNALL", os.path.abspath("runall"))
HOSTALLOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "cmd", "runall", "testdata", "hostalloc.py")
LIMIT = 1 << 30
TRIALS, MIB, OVER, HOLD = 6, 400, 2, 2


def own_memory_cgroup():
    """The directory of this process's cgroup v1 memory cgroup (or its v2 cgroup) and which."""
    mounts = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            pre, _, post = line.partition(" - ")
            fs, opts = post.split()[0], post.split()[2]
            root, point = pre.split()[3], pre.split()[4]
            if fs == "cgroup" and "memory" in opts.split(","):
                mounts["v1"] = (root, point)
            elif fs == "cgroup2":
                mounts["v2"] = (root, point)
    with open("/proc/self/cgroup") as f:
        paths = {}
        for line in f:
            hid, ctl, path = line.rstrip("\n").split(":", 2)
            if "memory" in ctl.split(","):
                paths["v1"] = path
            elif hid == "0":
                paths["v2"] = path
    for v in ("v1", "v2"):
        if v in mounts and v in paths:
            root, point = mounts[v]
            rel = os.path.relpath(paths[v], root)
            d = point if rel.startswith("..") else os.path.normpath(os.path.join(point, rel))
            return d, v
    sys.exit("no memory cgroup controller mounted")


def make_cgroup(parent, v):
    d = os.path.join(parent, "runall-bench-%d-%d" % (os.getpid(), time.time_ns()))
    os.mkdir(d)
    if v == "v1":
        open(os.path.join(d, "memory.limit_in_bytes"), "w").write(str(LIMIT))
        for name, val in (("memory.memsw.limit_in_bytes", str(LIMIT)), ("memory.swappiness", "0")):
            if os.path.exists(os.path.join(d, name)):
                open(os.path.join(d, name), "w").write(val)
    else:
        open(os.path.join(d, "memory.max"), "w").write(str(LIMIT))
        if os.path.exists(os.path.join(d, "memory.swap.max")):
            open(os.path.join(d, "memory.swap.max"), "w").write("0")
    return d


def oom_kills(d, v):
    name = "memory.oom_control" if v == "v1" else "memory.events"
    with open(os.path.join(d, name)) as f:
        for line in f:
            k, _, n = line.partition(" ")
            if k == "oom_kill":
                return int(n)
    return 0


def remove_cgroup(d):
    for _ in range(100):
        try:
            os.rmdir(d)
            return
        except OSError:
            time.sleep(0.05)


def sweep(memory, parallel):
    mem = f"    memory: {memory}\n" if memory else ""
    return (f"config:\n  max-parallel-commands: {parallel}\n  stop-on-failure: false\n  oom-retries: 3\n"
            f"tasks:\n  - name: sweep\n{mem}    parallel-tasks:\n"
            f"      - name: trial <replace>\n"
            f"        cmd: python3 {HOSTALLOC} --mib {MIB} --over {OVER} --hold {HOLD}\n"
            f"        for-each: [{', '.join(str(i) for i in range(1, TRIALS + 1))}]\n")


def run(label, text, parent, v, work):
    d = tempfile.mkdtemp(dir=work)
    path = os.path.join(d, "tasks.yml")
    open(path, "w").write(text)
    cg = make_cgroup(parent, v)
    try:
        cmd = ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', cg, RUNALL, "--no-gpu", "--output", "plain",
               "--log-dir", os.path.join(d, "logs"), "--results", os.path.join(d, "results.json"), path]
        t0 = time.monotonic()
        p = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=d)
        wall = time.monotonic() - t0
        kills = oom_kills(cg, v)
    finally:
        remove_cgroup(cg)
    res = json.load(open(os.path.join(d, "results.json")))
    tasks = [t for t in res["tasks"] if t.get("started_at") and t["name"].startswith("trial")]
    edges = sorted([(_ts(t["started_at"]), 1) for t in tasks] + [(_ts(t["finished_at"]), -1) for t in tasks])
    cur = most = 0
    for _, e in edges:
        cur += e
        most = max(most, cur)
    ok = sum(t["status"] == "ok" for t in tasks)
    requeues = sum(t.get("oom_requeues", 0) for t in tasks)
    makespan = max(_ts(t["finished_at"]) for t in tasks) - min(_ts(t["started_at"]) for t in tasks)
    return {"label": label, "makespan": makespan, "wall": wall, "ok": ok, "kills": kills, "requeues": requeues, "most": most,
            "exit": p.returncode, "runall_killed": p.returncode < 0}


def main():
    parent, v = own_memory_cgroup()
    work = tempfile.mkdtemp(prefix="runall-bench-hostmem-")
    rows = [
        run("host admission (memory: 450MiB)", sweep("450MiB", TRIALS), parent, v, work),
        run("memory: auto", sweep("auto", TRIALS), parent, v, work),
        run("under-declared (memory: 100MiB)", sweep("100MiB", TRIALS), parent, v, work),
        run("one at a time (max-parallel-commands: 1)", sweep("", 1), parent, v, work),
        run("no admission", sweep("", TRIALS), parent, v, work),
    ]
    base = rows[0]["makespan"]
    print(f"cgroup {v}, limit {LIMIT >> 20} MiB, {TRIALS} trials of {MIB} MiB (grow {OVER} s, hold {HOLD} s)\n")
    print("| run | makespan (s) | vs host admission | most at once | trials ok | OOM kills | OOM requeues | runall exit |")
    print("|---|---|---|---|---|---|---|---|")
    for r in rows:
        ex = "killed" if r["runall_killed"] else str(r["exit"])
        print(f"| {r['label']} | {r['makespan']:.2f} | {r['makespan'] / base:.2f}x | {r['most']} | "
              f"{r['ok']}/{TRIALS} | {r['kills']} | {r['requeues']} | {ex} |")


if __name__ == "__main__":
    main()
