"""What the GPU benchmarks share: run a tasks file on simulated GPUs, read its results."""
import json, os, subprocess, tempfile
from datetime import datetime

RUNALL = os.path.abspath(os.environ.get("RUNALL", "runall"))
GiB = 1 << 30

# How simulated trials hold memory (docs/gpu.md): "realistic" is fake-alloc's default (a
# PyTorch-like process: CUDA context, data in steps, optimizer's jump, memory counted for 1 s
# after the end); "linear" is the first simulation (a linear ramp, freed the instant the
# process ends), kept to compare against. PROFILES picks which the benchmarks run, in order.
PROFILE_ARGS = {"linear": " --profile linear --release-lag 0", "realistic": ""}
PROFILES = os.environ.get("PROFILES", "linear realistic").split()


def fake_alloc(gib, ramp, hold, profile="realistic"):
    """The command of a simulated trial holding gib GiB at its peak, reached after ramp s."""
    return f"runall fake-alloc --size {gib}GiB --ramp {ramp}s --hold {hold}s" + PROFILE_ARGS[profile]


def _ts(s):
    return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


def start_gap(tasks):
    """Median time from a trial's end to the next start, over the starts that came after some
    trial had ended (those that waited for room): how long admission takes to react."""
    ends = sorted(_ts(t["finished_at"]) for t in tasks)
    gaps = []
    for s in sorted(_ts(t["started_at"]) for t in tasks):
        before = [e for e in ends if e <= s]
        if before:
            gaps.append(s - before[-1])
    gaps.sort()
    return gaps[len(gaps) // 2] if gaps else None


def run_file(text, gpus, work, env=None, args=(), d=None, runall=None):
    """Runs the tasks file text with runall (RUNALL unless given) on simulated GPUs of spec
    gpus, in a fresh directory under work (or in d, whose log directory holds what earlier
    runs recorded), and returns the figures of its --results file."""
    runall = runall or RUNALL
    d = d or tempfile.mkdtemp(dir=work)
    path = os.path.join(d, "tasks.yml")
    with open(path, "w") as f:
        f.write(text)
    full_env = dict(os.environ, RUNALL_FAKE_GPUS=gpus, RUNALL_FAKE_GPU_STATE=os.path.join(d, "gpus"),
                    PATH=os.path.dirname(runall) + os.pathsep + os.environ["PATH"], **(env or {}))
    cmd = [runall, "--output", "plain", "--log-dir", os.path.join(d, "logs"),
           "--results", os.path.join(d, "results.json"), "--fake-gpus", gpus, *args, path]
    subprocess.run(cmd, env=full_env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=d)
    with open(os.path.join(d, "results.json")) as f:
        res = json.load(f)
    tasks = [t for t in res["tasks"] if t.get("started_at")]
    edges = sorted([(_ts(t["started_at"]), 1) for t in tasks] + [(_ts(t["finished_at"]), -1) for t in tasks])
    cur = most = 0
    for _, e in edges:
        cur += e
        most = max(most, cur)
    return {
        "makespan": max(_ts(t["finished_at"]) for t in tasks) - min(_ts(t["started_at"]) for t in tasks),
        "failed": sum(t["status"] == "failed" for t in res["tasks"]),
        "requeues": sum(t.get("oom_requeues", 0) for t in res["tasks"]),
        "peak_running": most,
        "gap": start_gap(tasks),
        "passed_over": max((t.get("passed_over", 0) for t in tasks), default=0),
        "learned": res.get("learned_gpu_memory") or {},
        "pids": res.get("gpu_process_ids", ""),
        "tasks": res["tasks"],
        "sharing": res.get("gpu_sharing") or {},
        "sharing_most": most_per_gpu(res.get("gpu_sharing") or {}),
    }


def most_per_gpu(sharing):
    """The most trials each GPU had at once under gpu-sharing: progress, as "GPU0 3, GPU1 4"."""
    return ", ".join(f"GPU{g['gpu']} {max(c['trials'] for c in g['trials_over_time'])}"
                     for g in sharing.get("gpus", []) if g.get("trials_over_time"))


def run_events(text, gpus, work, runall=RUNALL):
    """Runs the tasks file text like run_file, with --output json, and returns its events."""
    d = tempfile.mkdtemp(dir=work)
    path = os.path.join(d, "tasks.yml")
    with open(path, "w") as f:
        f.write(text)
    env = dict(os.environ, RUNALL_FAKE_GPUS=gpus, RUNALL_FAKE_GPU_STATE=os.path.join(d, "gpus"),
               PATH=os.path.dirname(runall) + os.pathsep + os.environ["PATH"])
    out = subprocess.run([runall, "--output", "json", "--log-dir", os.path.join(d, "logs"), "--fake-gpus", gpus, path],
                         env=env, capture_output=True, text=True, cwd=d).stdout
    return [json.loads(l) for l in out.splitlines() if l.startswith("{")]
