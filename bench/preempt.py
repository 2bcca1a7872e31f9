#!/usr/bin/env python3
"""Preemption (docs/benchmarks.md#preemption): a sweep of TRIALS trials of
cmd/runall/testdata/resume/sgd.py (scikit-learn's partial_fit, EPOCHS epochs of about EPOCH_S s,
its model pickled after each) on one "Pod" with an S3 destination on a local MinIO. The Pod is
killed KILLS times at random moments (SIGKILL to runall and every process under it), each a
seeded MIN_S to MAX_S s after the Pod's trials report their first epoch (so that every kill
falls in training, not in the start-up), its disk lost each time (a new working directory, no
logs), then started once more and left to finish.

Each build is measured in the same run, one after the other:
  - RUNALL with checkpoint: (the script prints runall-checkpoint step=N after each save),
  - RUNALL with checkpoint: and no such line (runall sees the directory change),
  - BASE (another build: main before checkpoint:) as a user would run it today: the script's
    checkpoint under the upload directory, uploaded every 1s, and no way to resume.

For each: how many times each trial finished (its script's "end" line: want 1), the epochs run
again after each kill (what the kill lost: at most the epoch whose copy had not landed), each
restart's start-up (from runall's start to the first epoch a resumed trial reports, less one
epoch), the total epochs run against TRIALS x EPOCHS, and whether every trial's final accuracy
equals that of a run of sgd.py that nothing interrupted.

    go build -o /tmp/runall-new ./cmd/runall
    git worktree add /tmp/main-wt MAIN && (cd /tmp/main-wt && go build -o /tmp/runall-main ./cmd/runall)
    RUNALL=/tmp/runall-new BASE=/tmp/runall-main PYTHON=/usr/bin/python3 python3 bench/preempt.py

Needs minio ($MINIO_BIN, PATH or ~/go/bin), the aws CLI (to create the bucket) and a python3
with scikit-learn ($PYTHON).
"""
import os, random, shutil, signal, statistics, subprocess, sys, tempfile, time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from claims import start_minio  # noqa: E402  (the same local MinIO)

RUNALL = os.path.abspath(os.environ.get("RUNALL", "runall"))
BASE = os.environ.get("BASE", "")
PYTHON = os.environ.get("PYTHON", "/usr/bin/python3")
SCRIPT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "cmd", "runall", "testdata", "resume", "sgd.py"))
TRIALS = int(os.environ.get("TRIALS", "2"))
EPOCHS = int(os.environ.get("EPOCHS", "40"))
EPOCH_S = float(os.environ.get("EPOCH_S", "0.5"))
KILLS = int(os.environ.get("KILLS", "20"))
MIN_S, MAX_S = float(os.environ.get("MIN_S", "0.5")), float(os.environ.get("MAX_S", "2.5"))
START_LIMIT = 300  # a Pod whose trials report no epoch by then is killed anyway
SEED = int(os.environ.get("SEED", "1"))
LRS = [0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5][:TRIALS]


def task_file(prefix, checkpoint, say):
    """The sweep: with checkpoint: (and runall-checkpoint lines when say), or as today."""
    lrs = ", ".join(str(lr) for lr in LRS)
    ckpt = "ckpt/<lr>" if checkpoint else "out/ckpt/<lr>"  # today: under the upload, as the issue tried
    cmd = (f"mkdir -p out && {PYTHON} {SCRIPT} --name lr=<lr> --lr <lr> --epochs {EPOCHS} --sleep {EPOCH_S} "
           f"--ckpt {ckpt}" + (" --say" if say else "") + (" ${RUNALL_RESUMED:+--resume}" if checkpoint else ""))
    lines = ["s3:", "  upload:", f"    - {{from: out/, to: \"s3://bench/{prefix}/\", every: 1s}}",
             "config:", f"  max-parallel-commands: {TRIALS}", "tasks:", "  - name: sweep", "    parallel-tasks:",
             "      - name: lr=<lr>", f"        cmd: {cmd}", f"        matrix: {{lr: [{lrs}]}}"]
    if checkpoint:
        lines.append("        checkpoint: ckpt/<lr>")
    return "\n".join(lines) + "\n"


def descendants(pid):
    parent = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                stat = open(f"/proc/{d}/stat").read()
                parent[int(d)] = int(stat[stat.rindex(")") + 2:].split()[1])
            except (OSError, ValueError):
                pass
    out = []
    for n in parent:
        p = parent.get(n)
        while p and p > 1:
            if p == pid:
                out.append(n)
                break
            p = parent.get(p)
    return out


def pod_kill(p):
    """SIGKILL to runall and everything under it at once (frozen first: nothing escapes)."""
    os.kill(p.pid, signal.SIGSTOP)
    procs = descendants(p.pid)
    for d in procs:
        os.kill(d, signal.SIGSTOP)
    for d in procs + [p.pid]:
        try:
            os.kill(d, signal.SIGKILL)
        except ProcessLookupError:
            pass
    p.wait()


def read_work(path):
    """Each epoch line (name, epoch, time) and each end line (name, accuracy)."""
    epochs, ends = [], []
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 3 and f[1] == "end":
                ends.append((f[0], float(f[2])))
            elif len(f) == 3:
                epochs.append((f[0], int(f[1]), float(f[2])))
    return epochs, ends


def pod(binary, text, env, work, n):
    """Starts Pod n: a new working directory (its disk), the task file, runall."""
    d = os.path.join(work, f"pod{n}")
    os.makedirs(d)
    open(os.path.join(d, "tasks.yml"), "w").write(text)
    log = open(os.path.join(work, f"pod{n}.log"), "w")
    return subprocess.Popen([binary, "--output", "plain", "--log-dir", "logs", "tasks.yml"], cwd=d, env=env,
                            stdout=log, stderr=subprocess.STDOUT), time.time()


def measure(label, binary, checkpoint, say, s3env, work, want):
    prefix = label.replace(" ", "-").replace(":", "")
    text = task_file(prefix, checkpoint, say)
    workfile = os.path.join(work, prefix + ".work")
    env = dict(os.environ, **s3env, WORK=workfile, OMP_NUM_THREADS="1", XDG_CACHE_HOME=os.path.join(work, "cache"))
    rng = random.Random(SEED)
    pods = os.path.join(work, prefix)
    os.makedirs(pods)
    runs = []  # (start time, lines of work before it)
    kills = 0
    for n in range(KILLS + 1):
        before = len(read_work(workfile)[0])
        p, started = pod(binary, text, env, pods, n)
        runs.append((started, before))
        if n == KILLS:
            p.wait(timeout=900)
            break
        wait = rng.uniform(MIN_S, MAX_S)
        deadline = started + START_LIMIT
        while time.time() < deadline and p.poll() is None:
            if len(read_work(workfile)[0]) > before:  # training: the kill falls wait s later
                deadline = min(deadline, time.time() + wait)
            time.sleep(0.05)
        if p.poll() is None:
            pod_kill(p)
            kills += 1
    epochs, ends = read_work(workfile)
    return summarize(label, kills, runs, epochs, ends, want)


def summarize(label, kills, runs, epochs, ends, want):
    finished = {f"lr={lr}": 0 for lr in LRS}
    for name, _ in ends:
        finished[name] += 1
    lost, startups = [], []
    for i in range(1, len(runs)):
        start, first = runs[i]
        done_before = {}
        for name, e, _ in epochs[:first]:
            done_before[name] = max(done_before.get(name, 0), e)
        end = runs[i + 1][1] if i + 1 < len(runs) else len(epochs)
        seen = set()
        for name, e, t in epochs[first:end]:
            if name in seen:
                continue
            seen.add(name)
            if name in done_before and done_before[name] < EPOCHS:
                lost.append(max(0, done_before[name] - (e - 1)))
                if e > 1:
                    startups.append(t - start - EPOCH_S)
    final = {name: acc for name, acc in ends}
    same = all(final.get(name) == acc for name, acc in want.items())
    return (f"| {label} | {kills} | {min(finished.values())}-{max(finished.values())} | "
            f"{max(lost) if lost else 0} (mean {statistics.mean(lost) if lost else 0:.2f}) | "
            f"{statistics.median(startups) if startups else float('nan'):.1f} | {len(epochs)} of {TRIALS * EPOCHS} | "
            f"{'yes' if same else 'no'} |")


def uninterrupted(work):
    want = {}
    for lr in LRS:
        d = tempfile.mkdtemp(dir=work)
        w = os.path.join(d, "work")
        subprocess.run([PYTHON, SCRIPT, "--name", f"lr={lr}", "--lr", str(lr), "--epochs", str(EPOCHS),
                        "--ckpt", os.path.join(d, "ckpt")], env=dict(os.environ, WORK=w), check=True,
                       stdout=subprocess.DEVNULL)
        want[f"lr={lr}"] = read_work(w)[1][0][1]
    return want


def main():
    work = tempfile.mkdtemp(prefix="runall-preempt-")
    minio, s3env = start_minio(work)
    try:
        want = uninterrupted(work)
        load = os.getloadavg()
        print(f"{TRIALS} trials x {EPOCHS} epochs of {EPOCH_S} s, {KILLS} kills {MIN_S:g}-{MAX_S:g} s after each Pod's first epoch "
              f"(seed {SEED}); load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start, {os.cpu_count()} cores\n")
        print("| build | kills | times each trial finished | epochs run again per trial and kill: max | "
              "restart start-up, median s | epochs run | final accuracy as uninterrupted |")
        print("|---|---|---|---|---|---|---|")
        configs = [("runall checkpoint: + runall-checkpoint lines", RUNALL, True, True),
                   ("runall checkpoint: (directory changes)", RUNALL, True, False)]
        if BASE:
            configs.append(("base, checkpoint under the upload", BASE, False, False))
        for label, binary, checkpoint, say in configs:
            print(measure(label, binary, checkpoint, say, s3env, work, want))
            sys.stdout.flush()
        load = os.getloadavg()
        print(f"\nload average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the end")
    finally:
        minio.terminate()
        minio.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
