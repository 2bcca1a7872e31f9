"""Learning curves that cross, for the adaptive-sweep benchmark (issue 47): the trials that
climb fastest level off lowest, and the slow starters end best, as a high learning rate that
climbs fast and levels off low does against a wide net with a small one. Each curve is
    c - (c - 0.1)·e^(-epoch/tau)
with its ceiling c and time constant tau from --speed (fast 1, mid 2.5, slow 5: ceilings 0.86,
0.91, 0.95) and --width (1, 2, 3: the ceiling 0.01 higher and tau 10% longer per step), plus
noise drawn from --seed (sd 0.003), rounded to 1/540 as an accuracy on 540 held-out examples
is. It prints each epoch as Keras's model.fit(verbose=2) does and, with --checkpoint DIR,
saves its epoch there after each one and resumes from it, as train_digits.py does.

    python3 crossing.py --speed slow --width 3 --seed 1 --epochs 27 --epoch-seconds 0.3
"""
import argparse
import math
import os
import random
import sys
import time

SPEEDS = {"fast": (1.0, 0.86), "mid": (2.5, 0.91), "slow": (5.0, 0.95)}


def value(speed, width, seed, epoch):
    tau, c = SPEEDS[speed]
    c += 0.01 * (width - 1)
    tau *= 1 + 0.1 * (width - 1)
    noise = random.Random(f"{speed}-{width}-{seed}-{epoch}").gauss(0, 0.003)
    return round((c - (c - 0.1) * math.exp(-epoch / tau) + noise) * 540) / 540


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--speed", choices=sorted(SPEEDS), required=True)
    p.add_argument("--width", type=int, choices=[1, 2, 3], required=True)
    p.add_argument("--seed", type=int, required=True)
    p.add_argument("--epochs", type=int, default=27)
    p.add_argument("--epoch-seconds", type=float, default=0.3)
    p.add_argument("--checkpoint")
    p.add_argument("--print-curve", action="store_true", help="print the whole curve on one line and exit")
    a = p.parse_args()
    if a.print_curve:
        print(" ".join(f"{value(a.speed, a.width, a.seed, e):.4f}" for e in range(1, a.epochs + 1)))
        return 0
    done = 0
    path = a.checkpoint and os.path.join(a.checkpoint, "epoch")
    if path and os.path.exists(path):
        done = int(open(path).read())
        print(f"resumed from epoch {done} of {path}", flush=True)
    for epoch in range(done + 1, a.epochs + 1):
        start = time.monotonic()
        print(f"Epoch {epoch}/{a.epochs}", flush=True)
        time.sleep(a.epoch_seconds)
        secs = max(1, round(time.monotonic() - start))
        print(f"10/10 - {secs}s - val_accuracy: {value(a.speed, a.width, a.seed, epoch):.4f}", flush=True)
        if path:
            os.makedirs(a.checkpoint, exist_ok=True)
            with open(path + ".tmp", "w") as f:
                f.write(str(epoch))
            os.replace(path + ".tmp", path)
            print(f"runall-checkpoint step={epoch}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
