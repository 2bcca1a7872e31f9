"""A training script that checkpoints, for the tests of the rules that pause trials (sha,
hyperband, pbt): scikit-learn's SGDClassifier trained on the digits data set one epoch at a
time with partial_fit. After each epoch it prints its validation accuracy as a runall-metric
line, pickles its model and epoch into --ckpt (a temporary file renamed: never torn), and
says which step the copy holds (runall-checkpoint step=N). It resumes from --ckpt when runall
says so (RUNALL_RESUMED=1), and checks that RUNALL_RESUME_STEP is the epoch it finds there.
The learning rate on the command line wins over the pickled one, so that a trial continued
from another's checkpoint (pbt) trains on with the values runall gave it. Deterministic: an
epoch's order comes from its number, so a paused and resumed trial ends where an
uninterrupted one does.

--stale-after N stops saving after epoch N (a script whose checkpoint stops changing).
Each epoch it appends "NAME EPOCH LR" to $WORK when set.
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
p.add_argument("--lr", type=float, required=True)
p.add_argument("--epochs", type=int, default=6)
p.add_argument("--ckpt", required=True)
p.add_argument("--sleep", type=float, default=0.0, help="seconds per epoch")
p.add_argument("--stale-after", type=int, default=0)
a = p.parse_args()

X, y = load_digits(return_X_y=True)
X = X / 16.0
Xtr, ytr, Xva, yva = X[:1400], y[:1400], X[1400:], y[1400:]

path = os.path.join(a.ckpt, "model.pkl")
start = 0
model = SGDClassifier(loss="log_loss", learning_rate="constant", eta0=a.lr, shuffle=False, random_state=0)
if os.environ.get("RUNALL_RESUMED") == "1":
    with open(path, "rb") as f:
        start, model = pickle.load(f)
    model.set_params(eta0=a.lr)
    step = os.environ.get("RUNALL_RESUME_STEP")
    print(f"resumed after epoch {start} with lr {a.lr}", flush=True)
    if step != str(start):
        sys.exit(f"runall says step {step}, the checkpoint holds epoch {start}")

os.makedirs(a.ckpt, exist_ok=True)
for epoch in range(start + 1, a.epochs + 1):
    order = np.random.RandomState(epoch).permutation(len(Xtr))
    model.partial_fit(Xtr[order], ytr[order], classes=np.arange(10))
    acc = model.score(Xva, yva)
    time.sleep(a.sleep)
    print(f"runall-metric val_accuracy={acc:.6f}", flush=True)
    if os.environ.get("WORK"):
        with open(os.environ["WORK"], "a") as f:
            f.write(f"{a.name} {epoch} {a.lr}\n")
    if a.stale_after and epoch > a.stale_after:
        continue
    with open(path + ".tmp", "wb") as f:
        pickle.dump((epoch, model), f)
    os.replace(path + ".tmp", path)
    print(f"runall-checkpoint step={epoch}", flush=True)
