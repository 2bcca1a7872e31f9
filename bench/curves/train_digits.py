"""A real learning curve for the adaptive-sweep benchmark: scikit-learn's digits (the copy
that ships with scikit-learn, read without importing it) learned by a one-hidden-layer MLP
one epoch at a time: ReLU, softmax, L2 penalty alpha, minibatches of 64 shuffled each epoch,
SGD with Nesterov momentum 0.9 and a constant learning rate, Glorot-uniform weights (what
scikit-learn's MLPClassifier(solver="sgd") does), in numpy alone: importing scikit-learn
takes about 2 s of CPU, numpy 0.4 s, and every trial a rule pauses and resumes pays its
start-up again. Each epoch is padded to a fixed time, so that a sweep of these trials
behaves like one of GPU training runs whose epochs take that long. It prints each epoch as
Keras's model.fit(verbose=2) does, so that runall reads its metrics with no change to the
script.

With --checkpoint DIR it saves the model, its optimizer and random state and its epoch there
after each epoch (written aside, then renamed: never torn), says so with a runall-checkpoint
line, and resumes from it when it is there: a trial paused and resumed ends with the same
metrics as one run without a pause. The learning rate and alpha given on the command line win
over the saved ones, so that a trial continued from another's checkpoint (population-based
training) trains on with its own values; the hidden size is the checkpoint's.

    python3 train_digits.py --lr 0.01 --alpha 1e-4 --hidden 64 --epochs 27 --epoch-seconds 0.3
"""
import argparse
import gzip
import importlib.util
import os
import pickle
import sys
import time

import numpy as np


def digits():
    """The 1797 8x8 digits and their labels, from scikit-learn's own copy of the data."""
    where = importlib.util.find_spec("sklearn").submodule_search_locations[0]
    with gzip.open(os.path.join(where, "datasets", "data", "digits.csv.gz")) as f:
        data = np.loadtxt(f, delimiter=",")
    return data[:, :-1], data[:, -1].astype(int)


def split(x, y, rng):
    """A stratified 70/30 split."""
    train, val = [], []
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        cut = int(round(len(idx) * 0.3))
        val.extend(idx[:cut])
        train.extend(idx[cut:])
    return np.array(sorted(train)), np.array(sorted(val))


class MLP:
    """One hidden layer of ReLUs and a softmax, trained by minibatch SGD with momentum."""

    def __init__(self, inputs, hidden, classes, rng):
        def glorot(fan_in, fan_out):
            bound = np.sqrt(6.0 / (fan_in + fan_out))
            return rng.uniform(-bound, bound, (fan_in, fan_out)), rng.uniform(-bound, bound, fan_out)
        self.params = [*glorot(inputs, hidden), *glorot(hidden, classes)]
        self.velocity = [np.zeros_like(p) for p in self.params]
        self.rng = rng

    def forward(self, x):
        w1, b1, w2, b2 = self.params
        h = np.maximum(x @ w1 + b1, 0)
        z = h @ w2 + b2
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        return h, p / p.sum(axis=1, keepdims=True)

    def epoch(self, x, y, lr, alpha, batch=64, momentum=0.9):
        """One pass over (x, y) in shuffled minibatches; the mean loss."""
        order = self.rng.permutation(len(x))
        losses = []
        for s in range(0, len(x), batch):
            i = order[s:s + batch]
            xb, yb = x[i], y[i]
            w1, b1, w2, b2 = self.params
            h, p = self.forward(xb)
            n = len(xb)
            losses.append(-np.log(p[np.arange(n), yb] + 1e-12).mean() + alpha / (2 * n) * ((w1 ** 2).sum() + (w2 ** 2).sum()))
            d = p.copy()
            d[np.arange(n), yb] -= 1
            d /= n
            gw2, gb2 = h.T @ d + alpha * w2 / n, d.sum(axis=0)
            dh = (d @ w2.T) * (h > 0)
            gw1, gb1 = xb.T @ dh + alpha * w1 / n, dh.sum(axis=0)
            for k, g in enumerate((gw1, gb1, gw2, gb2)):  # Nesterov's momentum, as scikit-learn's
                self.velocity[k] = momentum * self.velocity[k] - lr * g
                self.params[k] += momentum * self.velocity[k] - lr * g
        return float(np.mean(losses))

    def score(self, x, y):
        return float((self.forward(x)[1].argmax(axis=1) == y).mean())


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

    x, y = digits()
    tr, va = split(x, y, np.random.RandomState(0))
    mean, std = x[tr].mean(axis=0), x[tr].std(axis=0)
    std[std == 0] = 1
    xtr, xva = (x[tr] - mean) / std, (x[va] - mean) / std
    ytr, yva = y[tr], y[va]
    m = MLP(x.shape[1], a.hidden, 10, np.random.RandomState(a.seed))
    steps = (len(xtr) + 63) // 64
    done = 0
    if a.checkpoint:
        m, done = restore(a, m)
    for epoch in range(done + 1, a.epochs + 1):
        start = time.monotonic()
        print(f"Epoch {epoch}/{a.epochs}", flush=True)
        loss = m.epoch(xtr, ytr, a.lr, a.alpha)
        acc, val_acc = m.score(xtr, ytr), m.score(xva, yva)
        took = time.monotonic() - start
        time.sleep(max(0.0, a.epoch_seconds - took))
        secs = max(1, round(time.monotonic() - start))
        print(f"{steps}/{steps} - {secs}s - loss: {loss:.4f} - accuracy: {acc:.4f} - val_accuracy: {val_acc:.4f}", flush=True)
        if a.checkpoint:
            save(a.checkpoint, m, epoch)
    return 0


def restore(a, m):
    """The model and epoch saved in a.checkpoint; the fresh model and 0 when none was."""
    path = os.path.join(a.checkpoint, "model.pkl")
    if not os.path.exists(path):
        return m, 0
    with open(path, "rb") as f:
        saved = pickle.load(f)
    print(f"resumed from epoch {saved['epoch']} of {path}", flush=True)
    return saved["model"], saved["epoch"]


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
