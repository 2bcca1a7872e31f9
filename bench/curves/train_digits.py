"""A real learning curve for the adaptive-sweep benchmark: scikit-learn's digits (shipped with
the library, no download) learned by an MLP one epoch at a time with partial_fit. Each epoch is
padded to a fixed time, so that a sweep of these trials behaves like one of GPU training runs
whose epochs take that long. It prints each epoch as Keras's model.fit(verbose=2) does, so that
runall reads its metrics with no change to the script.

    python3 train_digits.py --lr 0.01 --alpha 1e-4 --hidden 64 --epochs 27 --epoch-seconds 0.3
"""
import argparse
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
    for epoch in range(1, a.epochs + 1):
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
