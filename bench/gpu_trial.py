#!/usr/bin/env python3
"""One trial of bench/gpu-check.sh (docs/benchmarks.md, "On a real GPU"): trains one of three
kinds of model on synthetic data and prints tqdm-style progress on stderr ('\\r'-separated
updates with n/total and it/s), then writes what it measured as one JSON object to --out.

  light   an MLP, with a data-loading stall each step (the GPU idle most of the time)
  medium  a small conv net on 32x32 inputs
  heavy   a transformer block at a batch that keeps the GPU busy

--calibrate S trains for S seconds (after a warm-up) and reports its rate instead of running a
fixed number of steps: the check sizes every trial from it. --smoke shrinks every model to run
on a CPU in seconds. Needs PyTorch; no other package.
"""
import argparse, json, os, sys, time

import torch
import torch.nn as nn

# Each kind's sizes: (full, smoke). The light kind's stall is its "data loading".
SIZES = {
    "light": ({"batch": 256, "width": 1024, "stall": 0.03}, {"batch": 16, "width": 32, "stall": 0.03}),
    "medium": ({"batch": 256, "channels": 64}, {"batch": 4, "channels": 4}),
    "heavy": ({"batch": 64, "seq": 512, "dim": 1024, "heads": 16}, {"batch": 2, "seq": 16, "dim": 32, "heads": 4}),
}


def build(kind, s, device):
    """The model, a function making one synthetic batch (x, y), and the step's stall."""
    if kind == "light":
        w = s["width"]
        model = nn.Sequential(nn.Linear(w, w), nn.ReLU(), nn.Linear(w, w), nn.ReLU(), nn.Linear(w, 10))
        return model.to(device), lambda: (torch.randn(s["batch"], w, device=device),
                                          torch.randint(0, 10, (s["batch"],), device=device)), s["stall"]
    if kind == "medium":
        c = s["channels"]
        model = nn.Sequential(
            nn.Conv2d(3, c, 3, padding=1), nn.ReLU(), nn.Conv2d(c, c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(c, 2 * c, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Flatten(), nn.Linear(2 * c * 8 * 8, 10))
        return model.to(device), lambda: (torch.randn(s["batch"], 3, 32, 32, device=device),
                                          torch.randint(0, 10, (s["batch"],), device=device)), 0.0
    d = s["dim"]
    block = nn.TransformerEncoderLayer(d, s["heads"], 4 * d, batch_first=True)
    model = nn.Sequential(block, nn.Flatten(), nn.Linear(s["seq"] * d, 10))
    return model.to(device), lambda: (torch.randn(s["batch"], s["seq"], d, device=device),
                                      torch.randint(0, 10, (s["batch"],), device=device)), 0.0


def bar(n, total, elapsed, rate):
    """A tqdm line: 'train:  45%|####5     | 45/100 [00:02<00:03, 18.52it/s]'."""
    def clock(s):
        s = int(s)
        return f"{s // 60:02d}:{s % 60:02d}"
    frac = n / total if total else 0
    filled = int(frac * 10)
    cells = "#" * filled + ("" if filled == 10 else str(int(frac * 100) % 10)) + " " * (9 - filled)
    left = (total - n) / rate if rate > 0 else 0
    speed = f"{rate:.2f}it/s" if rate >= 1 or rate == 0 else f"{1 / rate:.2f}s/it"
    return f"\rtrain: {int(frac * 100):3d}%|{cells[:10]}| {n}/{total} [{clock(elapsed)}<{clock(left)}, {speed}]"


def train(model, batch, stall, device, steps, seconds):
    """Trains for steps (or, with steps 0, for seconds); returns (steps, seconds) measured
    after a warm-up of a few steps, which pays for CUDA's start."""
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    loss_fn = nn.CrossEntropyLoss()
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)

    def step():
        if stall:
            time.sleep(stall)  # the input pipeline: the GPU has nothing to do meanwhile
        x, y = batch()
        opt.zero_grad(set_to_none=True)
        loss_fn(model(x), y).backward()
        opt.step()

    for _ in range(3):
        step()
    sync()
    start, n, last = time.monotonic(), 0, 0.0
    total = steps or 0
    while (steps and n < steps) or (not steps and time.monotonic() - start < seconds):
        step()
        n += 1
        now = time.monotonic()
        if now - last >= 0.5 or n == steps:
            sync()
            el = time.monotonic() - start
            sys.stderr.write(bar(n, total or n, el, n / el if el > 0 else 0))
            sys.stderr.flush()
            last = now
    sync()
    sys.stderr.write("\n")
    return n, time.monotonic() - start


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kind", choices=sorted(SIZES), required=True)
    ap.add_argument("--steps", type=int, default=0, help="steps to train (after the warm-up)")
    ap.add_argument("--calibrate", type=float, default=0, help="train this many seconds and report the rate")
    ap.add_argument("--smoke", action="store_true", help="tiny sizes, on the CPU")
    ap.add_argument("--out", required=True, help="write the measured figures here, as JSON")
    a = ap.parse_args()
    if not a.steps and not a.calibrate:
        ap.error("give --steps N or --calibrate SECONDS")
    device = torch.device("cuda" if torch.cuda.is_available() and not a.smoke else "cpu")
    if a.smoke:
        torch.set_num_threads(1)
    torch.manual_seed(0)
    model, batch, stall = build(a.kind, SIZES[a.kind][1 if a.smoke else 0], device)
    steps, secs = train(model, batch, stall, device, a.steps, a.calibrate)
    peak = torch.cuda.max_memory_reserved() if device.type == "cuda" else 0
    out = {"kind": a.kind, "steps": steps, "seconds": secs, "rate": steps / secs if secs > 0 else 0,
           "device": str(device), "peak_reserved": peak}
    with open(a.out, "w") as f:
        json.dump(out, f)
    print(f"gpu-check: {a.kind} {steps} steps in {secs:.2f}s ({out['rate']:.2f} it/s) on {device}")


if __name__ == "__main__":
    main()
