"""Writes optuna_figures.json: trials, and the importances Optuna's own PED-ANOVA evaluator
gives them, for importance_optuna_test.go.

Run with Optuna 5's source on the path (Debian's python3-optuna 3.1 lacks the evaluator):
    git -C OPTUNA archive HEAD optuna | tar -x -C /tmp/optuna5
    PYTHONPATH=/tmp/optuna5 /usr/bin/python3 optuna_figures.py > optuna_figures.json
Each parameter's distribution spans the values its trials took, as runall's does.
"""
import json
import math
import warnings

import optuna
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.importance import PedAnovaImportanceEvaluator, get_param_importances

warnings.simplefilter("ignore")
optuna.logging.set_verbosity(optuna.logging.ERROR)

OPTS = ["adam", "rmsprop", "sgd"]


def trial_params(i, n):
    # Deterministic and irregular: no sampler, so Go can read the same trials back.
    x = (i * 0.6180339887) % 1.0
    k = (i * 7) % 13 + 1
    lr = 10 ** (-5 + 4 * ((i * 0.4142135623) % 1.0))
    opt = OPTS[(i * 5 + i // 3) % 3]
    p = {"x": round(x, 6), "k": k, "lr": float("%.6g" % lr), "opt": opt}
    if opt == "sgd":
        p["momentum"] = round(((i * 0.7320508) % 1.0) * 0.9 + 0.05, 4)
    return p


def objective(p, i):
    v = (p["x"] - 0.3) ** 2 + 0.05 * math.sin(i) + 0.01 * p["k"]
    v += 0.2 * abs(math.log10(p["lr"]) + 3) / 4
    v += {"adam": 0.0, "rmsprop": 0.1, "sgd": 0.3}[p["opt"]]
    if "momentum" in p:
        v -= 0.2 * p["momentum"]
    return round(v, 9)


def dists(trials):
    out = {}
    for name in ["x", "k", "lr", "opt", "momentum"]:
        vals = [t[name] for t in trials if name in t]
        if not vals:
            continue
        if name == "opt":
            out[name] = CategoricalDistribution(sorted(set(vals)))
        elif name == "k":
            out[name] = IntDistribution(min(vals), max(vals))
        else:
            out[name] = FloatDistribution(min(vals), max(vals), log=(name == "lr"))
    return out


def case(name, n, direction):
    params = [trial_params(i, n) for i in range(n)]
    values = [objective(p, i) for i, p in enumerate(params)]
    ds = dists(params)
    study = optuna.create_study(direction=direction)
    for p, v in zip(params, values):
        study.add_trial(
            optuna.create_trial(params=p, distributions={k: ds[k] for k in p}, value=v)
        )
    ev = PedAnovaImportanceEvaluator()
    raw = ev.evaluate(study)
    norm = get_param_importances(study, evaluator=PedAnovaImportanceEvaluator())
    return {
        "name": name,
        "lower_better": direction == "minimize",
        "log": ["lr"],
        "trials": [{"params": {k: str(v) for k, v in p.items()}, "value": v} for p, v in zip(params, values)],
        "raw": raw,
        "importance": norm,
    }


print(json.dumps({
    "optuna": optuna.__version__,
    "cases": [
        case("30 trials minimize", 30, "minimize"),
        case("30 trials maximize", 30, "maximize"),
        case("8 trials minimize", 8, "minimize"),
        case("200 trials minimize", 200, "minimize"),
        case("200 trials maximize", 200, "maximize"),
    ],
}, indent=1))
