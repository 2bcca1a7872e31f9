#!/usr/bin/env python3
"""Claims against fixed shards (docs/benchmarks.md): three runall processes, each a "Pod" with
one simulated 32 GiB GPU that fits one trial at a time, share 30 trials whose durations vary
1-6x (0.5-3 s), once with --shard i/3 and once with --claims on a local MinIO, in the same run.

    make build && RUNALL=$PWD/runall python3 bench/claims.py
    ROUNDS=3 SEEDS="1 2 3" LEASE=10s RUNALL=$PWD/runall python3 bench/claims.py

Two kinds of workload: durations drawn at random (one per seed), and three durations in the order a
matrix over lr x size lists them, size varying fastest, so that trial k's size is k mod 3,
which is also its shard. Makespan is from the first process's start to the last one's exit.
Needs minio ($MINIO_BIN, PATH or ~/go/bin) and the aws CLI (to create the bucket).
"""
import os, random, re, shutil, socket, statistics, subprocess, sys, tempfile, time, urllib.request

RUNALL = os.environ.get("RUNALL", os.path.abspath("runall"))
PODS, TRIALS = 3, 30
ROUNDS = int(os.environ.get("ROUNDS", "1"))
SEEDS = [int(x) for x in os.environ.get("SEEDS", "7").split()]
LEASE = os.environ.get("LEASE", "60s")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def start_minio(work):
    binary = os.environ.get("MINIO_BIN") or shutil.which("minio") or os.path.expanduser("~/go/bin/minio")
    port, console = free_port(), free_port()
    env = dict(os.environ, MINIO_ROOT_USER="bench-user", MINIO_ROOT_PASSWORD="bench-secret-key",
               MINIO_BROWSER="off", MINIO_UPDATE="off")
    log = open(os.path.join(work, "minio.log"), "w")
    p = subprocess.Popen([binary, "server", os.path.join(work, "minio"), "--address", f"127.0.0.1:{port}",
                          "--console-address", f"127.0.0.1:{console}", "--quiet"], env=env, stdout=log, stderr=log)
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            urllib.request.urlopen(endpoint + "/minio/health/ready", timeout=1)
            break
        except OSError:
            time.sleep(0.1)
    s3env = {"AWS_ACCESS_KEY_ID": "bench-user", "AWS_SECRET_ACCESS_KEY": "bench-secret-key",
             "AWS_REGION": "us-east-1", "AWS_DEFAULT_REGION": "us-east-1", "AWS_ENDPOINT_URL": endpoint,
             "AWS_EC2_METADATA_DISABLED": "true"}
    subprocess.run(["aws", "--endpoint-url", endpoint, "s3", "mb", "s3://bench"], env=dict(os.environ, **s3env),
                   check=True, stdout=subprocess.DEVNULL)
    return p, s3env


def workloads():
    out = []
    for seed in SEEDS:
        rng = random.Random(seed)
        out.append((f"random 0.5-3 s, seed {seed}", [rng.choice([0.5, 1.0, 1.5, 2.0, 2.5, 3.0]) for _ in range(TRIALS)]))
    return out + [("matrix lr x size, 0.5/1.5/3 s by size", [[0.5, 1.5, 3.0][k % 3] for k in range(TRIALS)])]


def task_file(durations):
    lines = ["config:", "  max-parallel-commands: 4", "tasks:", "  - name: setup", "    cmd: 'true'",
             "  - name: sweep", "    parallel-tasks:"]
    for k, d in enumerate(durations):
        lines += [f"      - name: trial{k:02d}-{d}s", "        gpu-memory: 20GiB",
                  f"        cmd: runall fake-alloc --size 18GiB --ramp 0s --hold {d}s"]
    return "\n".join(lines) + "\n"


def simulated(durations):
    """The makespans of both policies with zero overhead: shard k mod PODS, and each trial in
    file order to the first Pod free (what claims do)."""
    free = [0.0] * PODS
    for d in durations:
        i = free.index(min(free))
        free[i] += d
    return max(sum(durations[i::PODS]) for i in range(PODS)), max(free)


def run_pods(work, path, mode, s3env, tag):
    """Starts PODS runalls on path, each on a simulated GPU of its own; returns the makespan
    and, for claims, the S3 requests they made."""
    procs = []
    start = time.monotonic()
    for i in range(PODS):
        d = tempfile.mkdtemp(dir=work)
        env = dict(os.environ, **s3env, RUNALL_FAKE_GPUS="32GiB", RUNALL_FAKE_GPU_STATE=os.path.join(d, "gpu"),
                   XDG_CACHE_HOME=os.path.join(d, "cache"),
                   PATH=os.path.dirname(RUNALL) + os.pathsep + os.environ["PATH"])
        extra = ["--shard", f"{i}/{PODS}"] if mode == "shards" else ["--claims", f"s3://bench/{tag}/", "--lease", LEASE]
        cmd = [RUNALL, "--output", "plain", "--log-dir", os.path.join(d, "logs"), *extra, path]
        procs.append(subprocess.Popen(cmd, env=env, cwd=d, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
    requests, codes = 0, []
    for p in procs:
        out, _ = p.communicate()
        codes.append(p.returncode)
        m = re.search(r"claims: (\d+) requests", out)
        requests += int(m.group(1)) if m else 0
    if any(codes):
        sys.exit(f"bench: {mode} exited {codes}")
    return time.monotonic() - start, requests


def main():
    work = tempfile.mkdtemp(prefix="runall-claims-bench-")
    minio, s3env = start_minio(work)
    try:
        print("| workload | lower bound (s) | fixed shards (s) | claims (s) | speed-up | zero-overhead shards / claims (s) | S3 requests per trial |")
        print("|---|---|---|---|---|---|---|")
        for name, durations in workloads():
            tag = re.sub(r"[^a-z0-9]+", "-", name)
            path = os.path.join(work, f"tasks-{tag}.yml")
            with open(path, "w") as f:
                f.write(task_file(durations))
            shards, claims, reqs = [], [], []
            for r in range(ROUNDS):
                order = ["shards", "claims"] if r % 2 == 0 else ["claims", "shards"]
                for mode in order:
                    span, n = run_pods(work, path, mode, s3env, f"{tag}-{r}")
                    (shards if mode == "shards" else claims).append(span)
                    if mode == "claims":
                        reqs.append(n / TRIALS)
            bound = max(sum(durations) / PODS, max(durations))
            s, c = statistics.median(shards), statistics.median(claims)
            ideal_s, ideal_c = simulated(durations)
            print(f"| {name} | {bound:.2f} | {s:.2f} | {c:.2f} | **{s / c:.2f}x** | {ideal_s:.2f} / {ideal_c:.2f} | "
                  f"{statistics.median(reqs):.1f} |")
            sys.stdout.flush()
    finally:
        minio.terminate()
        minio.wait()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
