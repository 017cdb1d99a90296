"""Fit and quantise the linear regression behind `hearth app regression`.

Run by hand from the repository root (`python3 apps/fit_diabetes.py`); its
outputs in data/diabetes/ are committed. Needs numpy and scikit-learn.

Integer model (what the encrypted program computes exactly):
    xq_j = round(x_j * FEATURE_SCALE)                  (sklearn's scaled features)
    yq   = sum_j wq_j * xq_j + bq,   yq / WEIGHT_SCALE ~ the float prediction
"""

import json
import os

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression
from sklearn.metrics import r2_score
from sklearn.model_selection import train_test_split

FEATURE_SCALE = 1000
OUT = os.path.join("data", "diabetes")


def main():
    x, y = load_diabetes(return_X_y=True)
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.3, random_state=0)
    model = LinearRegression().fit(x_tr, y_tr)
    r2_float = r2_score(y_te, model.predict(x_te))

    # The largest power of two keeping every weight within 10 signed bits.
    w_real = model.coef_ / FEATURE_SCALE
    weight_scale = 1
    while np.max(np.abs(np.round(w_real * weight_scale * 2))) < 512:
        weight_scale *= 2
    wq = [int(v) for v in np.round(w_real * weight_scale)]
    bq = int(round(model.intercept_ * weight_scale))

    xq = np.round(x_te * FEATURE_SCALE).astype(np.int64)
    yq = [int(sum(int(a) * b for a, b in zip(row, wq)) + bq) for row in xq]
    r2_quantised = r2_score(y_te, np.array(yq) / weight_scale)

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "rows.csv"), "w") as f:
        f.write(",".join([f"f{j}" for j in range(10)] + ["target"]) + "\n")
        for row, t in zip(xq, y_te):
            f.write(",".join(str(int(v)) for v in row) + f",{int(t)}\n")
    np.save(os.path.join(OUT, "rows.npy"), xq)
    with open(os.path.join(OUT, "expected.csv"), "w") as f:
        f.write("row,prediction\n")
        for i, v in enumerate(yq):
            f.write(f"{i},{v}\n")
    with open(os.path.join(OUT, "model.json"), "w") as f:
        json.dump(
            {
                "feature_scale": FEATURE_SCALE,
                "weight_scale": weight_scale,
                "weights": wq,
                "bias": bq,
                "r2_float": round(float(r2_float), 4),
                "r2_quantised": round(float(r2_quantised), 4),
                "source": "sklearn.datasets.load_diabetes, LinearRegression fit on a 70% train "
                "split (random_state 0) by apps/fit_diabetes.py; rows.csv is the 30% test split",
            },
            f,
            indent=1,
        )

    # Check the files alone give the same predictions.
    with open(os.path.join(OUT, "rows.csv")) as f:
        rows = [list(map(int, line.split(","))) for line in f.read().split("\n")[1:] if line]
    again = [sum(a * b for a, b in zip(r[:10], wq)) + bq for r in rows]
    assert again == yq
    print(f"weight scale {weight_scale}, weights {wq}, bias {bq}")
    print(f"R2 float {r2_float:.4f}, quantised {r2_quantised:.4f}; {len(yq)} rows; max |yq| {max(map(abs, yq))}")
    print(f"max |xq| {int(np.max(np.abs(xq)))}")


if __name__ == "__main__":
    main()
