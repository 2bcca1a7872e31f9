"""A training script that checkpoints, as issue 27's tests need one: scikit-learn's
SGDClassifier trained epoch by epoch with partial_fit on the digits data set; after each
epoch its validation accuracy is printed as a runall-metric line, then its model is pickled
into the checkpoint directory (written to a temporary file and renamed, as careful scripts
do). With --resume it goes on from the pickled model. Deterministic: an
epoch's order comes from the epoch's number, so a resumed run ends exactly where an
uninterrupted one does.

Each epoch it appends "NAME EPOCH TIME" to $WORK (when set), and "NAME end ACCURACY" once it
has trained every epoch: the tests and bench/preempt.py count from it the epochs run again
after a kill and the trials that finished.
"""
import argparse
import os
import pickle
import sys
import time

import numpy as np
from sklearn.datasets import load_digits
from sklearn.linear_model import SGDClassifier

p = argparse.ArgumentParser()
p.add_argument("--name", required=True)
p.add_argument("--lr", type=float, default=0.01)
p.add_argument("--epochs", type=int, default=8)
p.add_argument("--ckpt", required=True)
p.add_argument("--sleep", type=float, default=0.0, help="seconds per epoch, to stand for a longer one")
p.add_argument("--say", action="store_true", help="print runall-checkpoint step=N after each save")
p.add_argument("--resume", action="store_true")
a = p.parse_args()

X, y = load_digits(return_X_y=True)
X = X / 16.0
Xtr, ytr, Xva, yva = X[:1400], y[:1400], X[1400:], y[1400:]

path = os.path.join(a.ckpt, "model.pkl")
start, model = 0, SGDClassifier(loss="log_loss", learning_rate="constant", eta0=a.lr, shuffle=False, random_state=0)
if a.resume:
    with open(path, "rb") as f:
        start, model = pickle.load(f)
    step = os.environ.get("RUNALL_RESUME_STEP")
    print(f"resuming after epoch {start} (RUNALL_RESUME_STEP={step})", flush=True)
    if step is not None and int(step) != start:
        sys.exit(f"runall says step {step}, the checkpoint holds epoch {start}")

os.makedirs(a.ckpt, exist_ok=True)
for epoch in range(start + 1, a.epochs + 1):
    order = np.random.RandomState(epoch).permutation(len(Xtr))
    model.partial_fit(Xtr[order], ytr[order], classes=np.arange(10))
    acc = model.score(Xva, yva)
    time.sleep(a.sleep)
    print(f"runall-metric val_accuracy={acc:.6f}", flush=True)
    with open(path + ".tmp", "wb") as f:
        pickle.dump((epoch, model), f)
    os.replace(path + ".tmp", path)
    if os.environ.get("WORK"):
        with open(os.environ["WORK"], "a") as f:
            f.write(f"{a.name} {epoch} {time.time():.3f}\n")
    if a.say:
        print(f"runall-checkpoint step={epoch}", flush=True)

if os.environ.get("WORK"):
    with open(os.environ["WORK"], "a") as f:
        f.write(f"{a.name} end {model.score(Xva, yva):.6f}\n")
