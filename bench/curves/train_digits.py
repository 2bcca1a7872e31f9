"""A real learning curve for the adaptive-sweep benchmark: scikit-learn's digits (shipped with
the library, no download) learned by an MLP one epoch at a time with partial_fit. Each epoch is
padded to a fixed time, so that a sweep of these trials behaves like one of GPU training runs
whose epochs take that long. It prints each epoch as Keras's model.fit(verbose=2) does, so that
runall reads its metrics with no change to the script.

With --checkpoint DIR it saves the model and its epoch there after each epoch (written aside,
then renamed: never torn), and resumes from it when it is there, as a script that resumes
from its output directory does: a trial paused and resumed ends with the same metrics as one
run without a pause. The learning rate and alpha given on the command line win over the
saved ones, so that a trial continued from another's checkpoint (population-based training)
trains on with its own values; the hidden size is the checkpoint's.

    python3 train_digits.py --lr 0.01 --alpha 1e-4 --hidden 64 --epochs 27 --epoch-seconds 0.3
"""
import argparse
import os
import pickle
import sys
import time
import warnings

import numpy as np
from sklearn.datasets import load_digits
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--alpha", type=float, required=True)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--epochs", type=int, default=27)
    p.add_argument("--epoch-seconds", type=float, default=0.3)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--checkpoint", help="save the model here after each epoch, and resume from it")
    a = p.parse_args()

    x, y = load_digits(return_X_y=True)
    xtr, xva, ytr, yva = train_test_split(x, y, test_size=0.3, random_state=0, stratify=y)
    sc = StandardScaler().fit(xtr)
    xtr, xva = sc.transform(xtr), sc.transform(xva)
    m = MLPClassifier(hidden_layer_sizes=(a.hidden,), alpha=a.alpha, learning_rate_init=a.lr,
                      solver="sgd", momentum=0.9, batch_size=64, random_state=a.seed)
    classes = np.unique(y)
    warnings.simplefilter("ignore", ConvergenceWarning)
    steps = (len(xtr) + 63) // 64
    done = 0
    if a.checkpoint:
        m, done = restore(a, m)
    for epoch in range(done + 1, a.epochs + 1):
        start = time.monotonic()
        print(f"Epoch {epoch}/{a.epochs}", flush=True)
        m.partial_fit(xtr, ytr, classes=classes)
        acc = m.score(xtr, ytr)
        val_acc = m.score(xva, yva)
        loss = m.loss_
        took = time.monotonic() - start
        time.sleep(max(0.0, a.epoch_seconds - took))
        secs = max(1, round(time.monotonic() - start))
        print(f"{steps}/{steps} - {secs}s - loss: {loss:.4f} - accuracy: {acc:.4f} - val_accuracy: {val_acc:.4f}", flush=True)
        if a.checkpoint:
            save(a.checkpoint, m, epoch)
    return 0


def restore(a, m):
    """The model and epoch saved in a.checkpoint, with this run's learning rate and alpha; the
    fresh model and 0 when nothing was saved."""
    path = os.path.join(a.checkpoint, "model.pkl")
    if not os.path.exists(path):
        return m, 0
    with open(path, "rb") as f:
        saved = pickle.load(f)
    m, done = saved["model"], saved["epoch"]
    m.set_params(learning_rate_init=a.lr, alpha=a.alpha)
    if hasattr(m, "_optimizer"):  # partial_fit keeps its optimizer, with the rate it was made with
        m._optimizer.learning_rate_init = m._optimizer.learning_rate = a.lr
    print(f"resumed from epoch {done} of {path}", flush=True)
    return m, done


def save(directory, m, epoch):
    """Writes the model aside, then renames it into place, and says which epoch it holds."""
    os.makedirs(directory, exist_ok=True)
    tmp = os.path.join(directory, ".model.pkl.tmp")
    with open(tmp, "wb") as f:
        pickle.dump({"model": m, "epoch": epoch}, f)
    os.replace(tmp, os.path.join(directory, "model.pkl"))
    print(f"runall-checkpoint step={epoch}", flush=True)


if __name__ == "__main__":
    sys.exit(main())
