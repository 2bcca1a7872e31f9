#!/usr/bin/env python3
"""Train a small CNN on catsdogs-tiny: one hyperparameter trial of the runall example.

Reads train.csv/val.csv from --data-dir (the archive make_dataset.py writes); without them it
makes the same synthetic data in memory, so the script runs anywhere. Prints one plain line
per epoch (runall prefixes them with the trial's name), writes checkpoint-epoch-N.pt and
metrics.json (loss, accuracy, val_loss and val_accuracy per epoch, as Keras' history; runall
reads it through the task's metrics: key) after every epoch, and results.json at the end, to
--output-dir.

With --checkpoint-dir it also saves last.pt there after every epoch (the model, the optimizer,
the history and the random state) and prints "runall-checkpoint step=N", so that runall (the
task's checkpoint: key) keeps it and knows its epoch; with --resume it goes on from it, to the
same result as a run that nothing interrupted.

--gpu-memory-gb holds that much GPU memory for the whole run, to show runall packing trials
onto GPUs by free memory. A trial that does not fit fails with PyTorch's usual
"CUDA out of memory" error, which runall recognises and retries when memory frees up.

    python3 train.py --epochs 2 --output-dir /tmp/trial
"""

import argparse
import atexit
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import torch
from torch import nn

sys.path.insert(0, str(Path(__file__).resolve().parent))
import make_dataset  # noqa: E402  (the synthetic data when there is no dataset)


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.01, help="learning rate (SGD with momentum)")
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--experiment-id", default="local", help="names the trial in results.json")
    p.add_argument("--data-dir", default="", help="directory with train.csv and val.csv")
    p.add_argument("--output-dir", default="outputs", help="checkpoints and results.json go here")
    p.add_argument("--gpu-memory-gb", type=float, default=0.0,
                   help="hold about this much GPU memory for the run (CUDA only)")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint-dir", default="", help="save last.pt here after every epoch")
    p.add_argument("--resume", action="store_true", help="go on from --checkpoint-dir's last.pt")
    return p.parse_args(argv)


def log(msg):
    # Flushed each line: under runall stdout is a pipe, and Python would otherwise buffer.
    print(msg, flush=True)


def load_csv(path):
    labels, pixels = [], []
    with open(path, newline="") as f:
        rows = csv.reader(f)
        next(rows)  # header
        for row in rows:
            labels.append(int(row[0]))
            pixels.append([int(v) for v in row[1:]])
    return to_tensors(labels, pixels)


def to_tensors(labels, pixels):
    size = make_dataset.SIZE
    x = torch.tensor(pixels, dtype=torch.float32).view(-1, 1, size, size) / 255.0
    return x, torch.tensor(labels, dtype=torch.long)


def load_data(data_dir, seed):
    d = Path(data_dir) if data_dir else None
    if d and (d / "train.csv").is_file() and (d / "val.csv").is_file():
        log(f"data: {d}")
        return load_csv(d / "train.csv"), load_csv(d / "val.csv")
    log(f"data: no train.csv/val.csv in {str(d) if d else '--data-dir'}; using synthetic data")
    train = make_dataset.make_images(512, seed)
    val = make_dataset.make_images(128, seed + 1)
    return to_tensors(*zip(*train)), to_tensors(*zip(*val))


class Net(nn.Module):
    """Two conv blocks and a linear head: 16x16x1 -> 2 classes."""

    def __init__(self, dropout):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        )
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(dropout), nn.Linear(16 * 4 * 4, 2))

    def forward(self, x):
        return self.head(self.features(x))


def pick_device(name):
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cuda" and not torch.cuda.is_available():
        sys.exit("train.py: --device cuda but no CUDA device is available")
    return torch.device(name)


def hold_gpu_memory(gb, device):
    """Allocate about gb GiB on device and return the tensor; keep it referenced to hold it.

    A CUDA out-of-memory error is deliberately not caught: its message is what runall looks
    for to tell an OOM from any other failure.
    """
    if gb <= 0:
        return None
    if device.type != "cuda":
        if os.environ.get("RUNALL_FAKE_GPUS") and shutil.which("runall"):
            # On runall's simulated GPUs (--fake-gpus), claim it there as CUDA would, so that
            # runall sees this trial's memory; the claim ends with this process.
            claim = subprocess.Popen(["runall", "fake-alloc", "--size", f"{gb:g}GiB", "--ramp", "1s", "--hold", "24h"])
            atexit.register(claim.terminate)
            # torch.empty returns once CUDA holds the memory: wait out the claim's ramp, and
            # fail as CUDA would when it did not fit (fake-alloc printed PyTorch's message).
            try:
                code = claim.wait(timeout=1.2)
                sys.exit(f"train.py: the simulated GPU claim ended with exit code {code}")
            except subprocess.TimeoutExpired:
                pass
            log(f"gpu memory: holding {gb:g} GiB on a simulated GPU")
            return claim
        log(f"gpu memory: --gpu-memory-gb {gb:g} ignored on {device.type}")
        return None
    block = torch.empty(int(gb * (1 << 30)), dtype=torch.uint8, device=device)
    log(f"gpu memory: holding {gb:g} GiB on {device}")
    return block


def evaluate(model, x, y, loss_fn):
    model.eval()
    with torch.no_grad():
        out = model(x)
        return loss_fn(out, y).item(), (out.argmax(1) == y).float().mean().item()


def save_atomic(obj, path, save):
    # Write then rename, so a periodic upload never picks up half a file.
    tmp = path.with_name(path.name + ".tmp")
    save(obj, tmp)
    os.replace(tmp, path)


def write_metrics(out_dir, history):
    """metrics.json: each metric's value per epoch so far, as Keras' history has them."""
    save_atomic({k: [h[k] for h in history] for k in ("loss", "accuracy", "val_loss", "val_accuracy")},
                out_dir / "metrics.json", write_json)


def save_checkpoint(ckpt_dir, epoch, model, opt, history):
    """The state a resumed run needs to end as an uninterrupted one would; then say so."""
    if not ckpt_dir:
        return
    ckpt_dir.mkdir(parents=True, exist_ok=True)
    save_atomic({"epoch": epoch, "model": model.state_dict(), "optimizer": opt.state_dict(),
                 "history": history, "rng": torch.get_rng_state()}, ckpt_dir / "last.pt", torch.save)
    log(f"runall-checkpoint step={epoch}")


def load_checkpoint(ckpt_dir, model, opt):
    """The epoch and history last.pt holds, its state loaded into model and opt."""
    if not ckpt_dir or not (ckpt_dir / "last.pt").is_file():
        sys.exit("train.py: --resume needs --checkpoint-dir with a last.pt")
    state = torch.load(ckpt_dir / "last.pt", weights_only=False)
    model.load_state_dict(state["model"])
    opt.load_state_dict(state["optimizer"])
    torch.set_rng_state(state["rng"])
    log(f"resumed after epoch {state['epoch']} (RUNALL_RESUME_STEP={os.environ.get('RUNALL_RESUME_STEP')})")
    return state["epoch"], state["history"]


def write_json(obj, path):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)
        f.write("\n")


class Interrupted(Exception):
    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def on_signal(signum, _frame):
    raise Interrupted(signum)


def main(argv=None):
    args = parse_args(argv)
    # runall sends SIGTERM first and waits its grace period: stop at the next step and still
    # write results.json, so the final upload has something to say.
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)

    start = time.monotonic()
    torch.manual_seed(args.seed)
    out_dir = Path(args.output_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    device = pick_device(args.device)
    log(f"trial {args.experiment_id}: lr={args.lr:g} dropout={args.dropout:g} "
        f"batch-size={args.batch_size} epochs={args.epochs} device={device}")

    held = hold_gpu_memory(args.gpu_memory_gb, device)
    (x_train, y_train), (x_val, y_val) = load_data(args.data_dir, args.seed)
    x_train, y_train, x_val, y_val = (t.to(device) for t in (x_train, y_train, x_val, y_val))

    model = Net(args.dropout).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    loss_fn = nn.CrossEntropyLoss()
    history, done = [], 0
    ckpt_dir = Path(args.checkpoint_dir) if args.checkpoint_dir else None
    if args.resume:
        done, history = load_checkpoint(ckpt_dir, model, opt)
        # The epochs before the checkpoint are this trial's too, also when none is left to
        # train (its Pod died after the last epoch was saved, before the trial was recorded).
        write_metrics(out_dir, history)
    status = "completed"
    try:
        for epoch in range(done + 1, args.epochs + 1):
            t0 = time.monotonic()
            model.train()
            perm = torch.randperm(len(x_train), device=device)
            total, correct, loss_sum = 0, 0, 0.0
            for i in range(0, len(perm), args.batch_size):
                idx = perm[i:i + args.batch_size]
                xb, yb = x_train[idx], y_train[idx]
                opt.zero_grad()
                out = model(xb)
                loss = loss_fn(out, yb)
                loss.backward()
                opt.step()
                loss_sum += loss.item() * len(idx)
                correct += (out.argmax(1) == yb).sum().item()
                total += len(idx)
            val_loss, val_acc = evaluate(model, x_val, y_val, loss_fn)
            row = {"epoch": epoch, "loss": loss_sum / total, "accuracy": correct / total,
                   "val_loss": val_loss, "val_accuracy": val_acc,
                   "seconds": round(time.monotonic() - t0, 3)}
            history.append(row)
            log(f"epoch {epoch}/{args.epochs} loss={row['loss']:.4f} acc={row['accuracy']:.3f} "
                f"val_loss={val_loss:.4f} val_acc={val_acc:.3f} ({row['seconds']:.2f}s)")
            # After every epoch, so that a trial stopped half-way still reports its epochs.
            write_metrics(out_dir, history)
            save_atomic({"epoch": epoch, "model": model.state_dict(),
                         "optimizer": opt.state_dict(), "args": vars(args)},
                        out_dir / f"checkpoint-epoch-{epoch}.pt", torch.save)
            save_checkpoint(ckpt_dir, epoch, model, opt, history)
    except Interrupted as e:
        status = f"interrupted by {e}"
        log(f"trial {args.experiment_id}: {status}; writing results.json")
        exit_code = 128 + e.signum
    else:
        exit_code = 0

    final = history[-1] if history else {}
    results = {
        "experiment_id": args.experiment_id,
        "status": status,
        "hyperparameters": {"lr": args.lr, "dropout": args.dropout,
                            "batch_size": args.batch_size, "epochs": args.epochs,
                            "seed": args.seed},
        "device": str(device),
        "gpu_memory_gb": args.gpu_memory_gb if held is not None else 0,
        "final": {k: final.get(k) for k in ("loss", "accuracy", "val_loss", "val_accuracy")},
        "epochs_completed": len(history),
        "history": history,
        "duration_seconds": round(time.monotonic() - start, 3),
        "torch_version": torch.__version__,
    }
    save_atomic(results, out_dir / "results.json", write_json)
    log(f"trial {args.experiment_id}: {status}, val_acc={final.get('val_accuracy', 0):.3f}, "
        f"results in {out_dir / 'results.json'}")
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
