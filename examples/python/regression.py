"""The diabetes regression, encrypted end to end.

A linear model quantised to integers (``data/diabetes/model.json``) runs on
encrypted feature rows: ``y = x @ w + bias``, one fused sum per row. The
decrypted predictions are compared with the integer model in numpy, with
the committed expected values (``data/diabetes/expected.csv``) and, when
scikit-learn is installed, with its float prediction (``y / weight_scale``).

    python examples/python/regression.py --rows 4

Exits with status 1 if any prediction differs from the integer model.
"""

from __future__ import annotations

import argparse
import csv
import json
import pathlib
import sys
import time

import numpy as np

import hearth

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "diabetes"


def sklearn_prediction(rows: int) -> np.ndarray | None:
    """scikit-learn's float prediction of the first `rows` test rows, fitted
    as ``apps/fit_diabetes.py`` does; None without scikit-learn."""
    try:
        from sklearn.datasets import load_diabetes
        from sklearn.linear_model import LinearRegression
        from sklearn.model_selection import train_test_split
    except ImportError:
        return None
    x, y = load_diabetes(return_X_y=True)
    x_tr, x_te, y_tr, _ = train_test_split(x, y, test_size=0.3, random_state=0)
    return LinearRegression().fit(x_tr, y_tr).predict(x_te[:rows])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rows", type=int, default=4, help="rows to encrypt (1..133)")
    ap.add_argument("--threads", type=int, help="threads (default: all cores)")
    args = ap.parse_args()

    model = json.loads((DATA / "model.json").read_text())
    x = np.load(DATA / "rows.npy")[: args.rows]
    w = np.array(model["weights"])
    with open(DATA / "expected.csv") as f:
        expected = [int(r["prediction"]) for r in csv.DictReader(f)][: args.rows]
    digits = max(int(np.abs(x).max()).bit_length(), 1)

    @hearth.compile(x=f"digits{digits}[{len(x)}, 10]", w=w, bias=model["bias"], threads=args.threads)
    def predict(x, w, bias):
        return x @ w + bias

    s = predict.stats
    print(f"program: {len(x)} rows, {s['pbs']} PBS, depth {s['depth']}, "
          f"{predict.memory_estimate(args.threads) / 2**20:.0f} MiB estimated")

    t = time.perf_counter()
    key = hearth.ClientKey.generate(predict.params)
    server_key = key.server_key()
    print(f"keys ({predict.params}): {time.perf_counter() - t:.1f} s")

    t = time.perf_counter()
    out = predict.run(server_key, key.encrypt(predict, x), threads=args.threads)
    print(f"encrypted run: {time.perf_counter() - t:.1f} s")
    y = key.decrypt(out)

    model_y = [sum(int(a) * int(b) for a, b in zip(row, w)) + model["bias"] for row in x]
    float_y = sklearn_prediction(len(x))
    scale = model["weight_scale"]
    print(f"{'row':>4} {'decrypted':>10} {'integer model':>14} {'expected.csv':>13} {'float':>8}")
    for i, v in enumerate(y):
        fl = f"{float_y[i]:8.2f}" if float_y is not None else "       -"
        print(f"{i:>4} {int(v):>10} {model_y[i]:>14} {expected[i]:>13} {fl}  ({int(v) / scale:.2f})")
    if float_y is not None:
        err = np.abs(np.asarray(y, dtype=float) / scale - float_y).max()
        print(f"largest difference from scikit-learn's float prediction: {err:.3f} (quantisation)")
    else:
        print("scikit-learn is not installed: no float comparison")

    exact = [int(v) for v in y] == model_y == expected
    print("exact: every prediction equals the integer model" if exact else "MISMATCH")
    return 0 if exact else 1


if __name__ == "__main__":
    sys.exit(main())
