#!/usr/bin/env python3
"""The live server's cost to a run (docs/benchmarks.md): one sweep on simulated GPUs run
without --serve, with --serve and nobody watching, and with --serve and N clients following
its page to the end (bench/livefollow, niced: browsers run elsewhere), in turn, ROUNDS
times. It prints, per run, the trials' median and longest time, the run's makespan and
runall's CPU time.

    make build && go build -o /tmp/livefollow ./bench/livefollow
    RUNALL=./runall LIVEFOLLOW=/tmp/livefollow N=50 ROUNDS=3 python3 bench/serve.py

The sweep (cmd/runall/testdata/serve/follow.yml unless SWEEP names another): sixteen trials,
four at a time, each printing a metric and a line every 0.1 s for 3 s with nothing but
sleep started, so that a trial's time is its 3 s plus what runall adds.
"""
import json, os, re, signal, statistics, subprocess, sys, tempfile, threading, time

import benchlib

HERE = os.path.dirname(os.path.abspath(__file__))
SWEEP = os.environ.get("SWEEP", os.path.join(HERE, "..", "cmd", "runall", "testdata", "serve", "follow.yml"))


def run(work, followers, serve, follow_bin):
    """Runs the sweep once; returns its figures."""
    d = tempfile.mkdtemp(dir=work)
    env = dict(os.environ, RUNALL_FAKE_GPU_STATE=os.path.join(d, "gpus"),
               PATH=os.path.dirname(benchlib.RUNALL) + os.pathsep + os.environ["PATH"])
    cmd = [benchlib.RUNALL, "--output", "plain", "--log-dir", "logs", "--results", "results.json", "--fake-gpus", "2x16GiB"]
    if serve:
        cmd += ["--serve", "127.0.0.1:0", "--serve-after", "10m"]
    p = subprocess.Popen(cmd + [SWEEP], cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    url, ended = [], threading.Event()

    def drain(stream, on_line):
        for line in stream:
            on_line(line)

    def on_stdout(line):
        m = re.search(r"serving the live report on (http://\S+/)", line)
        if m:
            url.append(m.group(1))

    def on_stderr(line):
        if "its report stays served" in line:  # the run has ended; runall keeps serving
            ended.set()

    threading.Thread(target=drain, args=(p.stdout, on_stdout), daemon=True).start()
    threading.Thread(target=drain, args=(p.stderr, on_stderr), daemon=True).start()
    follow = ""
    if serve:
        while not url:
            time.sleep(0.01)
        fp = None
        if followers:
            fp = subprocess.Popen(["nice", "-n", "19", follow_bin, "-n", str(followers), url[0]],
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        ended.wait()
        if fp:
            out, err = fp.communicate()
            if fp.returncode != 0:
                sys.exit(f"livefollow failed: {out}{err}")
            follow = out.strip()
        p.send_signal(signal.SIGTERM)
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        sys.exit(f"runall exited {p.returncode}")
    with open(os.path.join(d, "results.json")) as f:
        tasks = [t for t in json.load(f)["tasks"] if t.get("started_at")]
    times = sorted(benchlib._ts(t["finished_at"]) - benchlib._ts(t["started_at"]) for t in tasks)
    makespan = max(benchlib._ts(t["finished_at"]) for t in tasks) - min(benchlib._ts(t["started_at"]) for t in tasks)
    return {"median": statistics.median(times), "max": times[-1], "makespan": makespan,
            "cpu": usage.ru_utime + usage.ru_stime, "follow": follow}


def main():
    n = int(os.environ.get("N", "50"))
    rounds = int(os.environ.get("ROUNDS", "3"))
    follow_bin = os.environ.get("LIVEFOLLOW", "/tmp/livefollow")
    work = tempfile.mkdtemp()
    modes = [("no --serve", 0, False), ("--serve, nobody watching", 0, True), (f"--serve, {n} following", n, True)]
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    print("| round | run | trial median (s) | trial max (s) | makespan (s) | runall CPU (s) | followers |")
    print("|---|---|---|---|---|---|---|")
    for r in range(rounds):
        for name, followers, serve in modes:
            f = run(work, followers, serve, follow_bin)
            print(f"| {r + 1} | {name} | {f['median']:.2f} | {f['max']:.2f} | {f['makespan']:.2f} | {f['cpu']:.2f} | {f['follow']} |", flush=True)
    print(f"load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
