#!/usr/bin/env python3
"""A trial that contends for something the simulated GPUs do not model: --slots locks on the
host (as a data-loading server with that many workers would be). Each step waits --free
seconds outside them, then holds a free one --held seconds, or waits for one when none is
free; a step that had to wait holds it --thrash seconds more (the cost of sharing: caches
refilled). It prints a runall-progress line after each step; with --ckpt it saves its step
there every --every steps (runall-checkpoint line) and resumes from it."""
import argparse
import fcntl
import os
import time

p = argparse.ArgumentParser()
p.add_argument("--lock", required=True)
p.add_argument("--steps", type=int, default=100)
p.add_argument("--held", type=float, default=0.02)
p.add_argument("--free", type=float, default=0.02)
p.add_argument("--thrash", type=float, default=0.0)
p.add_argument("--slots", type=int, default=1)
p.add_argument("--ckpt")
p.add_argument("--every", type=int, default=5)
a = p.parse_args()

step = 0
if a.ckpt:
    os.makedirs(a.ckpt, exist_ok=True)
    try:
        with open(os.path.join(a.ckpt, "step")) as f:
            step = int(f.read())
    except (OSError, ValueError):
        pass
fds = [os.open(f"{a.lock}.{i}", os.O_CREAT | os.O_RDWR, 0o644) for i in range(a.slots)]


def take():
    """A free slot's descriptor, and whether the step had to wait for one."""
    for fd in fds:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd, False
        except BlockingIOError:
            pass
    fd = fds[step % len(fds)]
    fcntl.flock(fd, fcntl.LOCK_EX)
    return fd, True


while step < a.steps:
    time.sleep(a.free)
    fd, waited = take()
    time.sleep(a.held + (a.thrash if waited else 0))
    fcntl.flock(fd, fcntl.LOCK_UN)
    step += 1
    if a.ckpt and step % a.every == 0:
        tmp = os.path.join(a.ckpt, "step.tmp")
        with open(tmp, "w") as f:
            f.write(str(step))
        os.replace(tmp, os.path.join(a.ckpt, "step"))
        print(f"runall-checkpoint step={step}", flush=True)
    print(f"runall-progress iter={step} of={a.steps}", flush=True)
