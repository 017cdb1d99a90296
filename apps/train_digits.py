"""Train and quantise the small CNN behind `hearth app digits`.

Run by hand from the repository root (`python3 apps/train_digits.py`); its
outputs in data/digits/ are committed. Needs numpy and scikit-learn; the
training is plain numpy (backpropagation, Adam, fixed seed).

Integer inference (what the encrypted program computes exactly):
  1. x: pixels 0..16, shape [1, 8, 8].
  2. c[r][i][j] = cb[r] + sum_{k,l < 3} cw[r][0][k][l] * x[0][i+k][j+l]   -> [R, 6, 6]
  3. a = max(c, 0)
  4. p[r][i][j] = floor((a[r][2i][2j] + a[r][2i][2j+1] + a[r][2i+1][2j] + a[r][2i+1][2j+1]) / 4)
  5. logits[o] = db[o] + sum_f dw[o][f] * p_flat[f]   (p_flat channel-major: f = r*9 + i*3 + j)
  6. prediction = argmax(logits), the first maximum on ties.
"""

import json
import os

import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

R = 4
OUT = os.path.join("data", "digits")
TEST_IMAGES = 50


def patches(x):
    """[n, 8, 8] -> [n, 36, 9]: the 3x3 patch under every output position."""
    n = x.shape[0]
    out = np.empty((n, 36, 9))
    for i in range(6):
        for j in range(6):
            out[:, i * 6 + j, :] = x[:, i:i + 3, j:j + 3].reshape(n, 9)
    return out


POOL = np.zeros((36, 9))  # average pooling 2x2 as a matrix on the 6x6 positions
for i in range(6):
    for j in range(6):
        POOL[i * 6 + j, (i // 2) * 3 + j // 2] = 0.25


def forward(params, xp):
    cw, cb, dw, db = params
    c = xp @ cw.T + cb  # [n, 36, R]
    a = np.maximum(c, 0)
    p = np.einsum("nsr,sq->nrq", a, POOL).reshape(len(xp), R * 9)  # channel-major
    return c, a, p, p @ dw.T + db


def train(x, y, epochs=60, lr=0.01, seed=0):
    rng = np.random.default_rng(seed)
    xp = patches(x / 16.0)
    params = [
        rng.normal(0, 0.5, (R, 9)),
        np.zeros(R),
        rng.normal(0, 0.3, (10, R * 9)),
        np.zeros(10),
    ]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    t = 0
    onehot = np.eye(10)[y]
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for s in range(0, len(x), 32):
            idx = order[s:s + 32]
            c, a, p, z = forward(params, xp[idx])
            prob = np.exp(z - z.max(1, keepdims=True))
            prob /= prob.sum(1, keepdims=True)
            dz = (prob - onehot[idx]) / len(idx)
            g_dw = dz.T @ p
            g_db = dz.sum(0)
            dp = (dz @ params[2]).reshape(len(idx), R, 9)
            da = np.einsum("nrq,sq->nsr", dp, POOL) * (c > 0)
            g_cw = np.einsum("nsr,nsk->rk", da, xp[idx])
            g_cb = da.sum((0, 1))
            t += 1
            for i, g in enumerate([g_cw, g_cb, g_dw, g_db]):
                m[i] = 0.9 * m[i] + 0.1 * g
                v[i] = 0.999 * v[i] + 0.001 * g * g
                mh, vh = m[i] / (1 - 0.9**t), v[i] / (1 - 0.999**t)
                params[i] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return params


def int_logits(img, cw, cb, dw, db):
    """The integer inference of the module docstring, in Python ints."""
    a = [[[0] * 6 for _ in range(6)] for _ in range(R)]
    for r in range(R):
        for i in range(6):
            for j in range(6):
                s = cb[r] + sum(cw[r][0][k][l] * img[i + k][j + l] for k in range(3) for l in range(3))
                a[r][i][j] = max(s, 0)
    p = []
    for r in range(R):
        for i in range(3):
            for j in range(3):
                s = a[r][2 * i][2 * j] + a[r][2 * i][2 * j + 1] + a[r][2 * i + 1][2 * j] + a[r][2 * i + 1][2 * j + 1]
                p.append(s // 4)
    logits = [db[o] + sum(dw[o][f] * p[f] for f in range(R * 9)) for o in range(10)]
    return logits, max(max(max(row) for row in ch) for ch in a), max(p)


def argmax(v):
    return max(range(len(v)), key=lambda i: (v[i], -i))


def main():
    digits = load_digits()
    x, y = digits.images.astype(np.int64), digits.target
    x_tr, x_te, y_tr, y_te = train_test_split(x, y, test_size=0.25, random_state=0)
    params = train(x_tr, y_tr)
    _, _, _, z = forward(params, patches(x_te / 16.0))
    acc_float = float(np.mean(z.argmax(1) == y_te))

    fcw, fcb, fdw, fdb = params
    # Inputs are 0..16 integers (the float model saw x / 16): fold 1/16 into
    # the conv weights, then scale by the largest power of two within [-15, 15].
    wc = fcw / 16.0
    sc = 2.0 ** np.floor(np.log2(15 / np.abs(wc).max()))
    sd = 2.0 ** np.floor(np.log2(31 / np.abs(fdw).max()))
    cw = [[[[int(round(wc[r, k * 3 + l] * sc)) for l in range(3)] for k in range(3)]] for r in range(R)]
    cb = [int(round(fcb[r] * sc)) for r in range(R)]
    dw = [[int(round(fdw[o, f] * sd)) for f in range(R * 9)] for o in range(10)]
    db = [int(round(fdb[o] * sc * sd)) for o in range(10)]

    preds, logits_all, max_a, max_p = [], [], 0, 0
    for img in x_te:
        lg, ma, mp = int_logits(img.tolist(), cw, cb, dw, db)
        preds.append(argmax(lg))
        logits_all.append(lg)
        max_a, max_p = max(max_a, ma), max(max_p, mp)
    acc_q = float(np.mean(np.array(preds) == y_te))

    os.makedirs(OUT, exist_ok=True)
    with open(os.path.join(OUT, "model.json"), "w") as f:
        json.dump(
            {
                "conv": {"weights": cw, "bias": cb},
                "pool": 2,
                "dense": {"weights": dw, "bias": db},
                "accuracy_float": round(acc_float, 4),
                "accuracy_quantised": round(acc_q, 4),
                "test_images": len(x_te),
                "source": "sklearn.datasets.load_digits, 75% train split (random_state 0), "
                "trained and quantised by apps/train_digits.py",
            },
            f,
        )
    with open(os.path.join(OUT, "test_images.csv"), "w") as f:
        f.write(",".join(["label", "prediction"] + [f"p{i}" for i in range(64)]) + "\n")
        for img, lab, pr in list(zip(x_te, y_te, preds))[:TEST_IMAGES]:
            f.write(",".join(str(int(v)) for v in [lab, pr] + img.reshape(64).tolist()) + "\n")
    with open(os.path.join(OUT, "test_logits.csv"), "w") as f:
        f.write(",".join(["image"] + [f"l{i}" for i in range(10)]) + "\n")
        for i, lg in enumerate(logits_all[:TEST_IMAGES]):
            f.write(",".join(str(v) for v in [i] + lg) + "\n")
    np.save(os.path.join(OUT, "test_images.npy"), x_te[:TEST_IMAGES].astype(np.int64))

    # Check: the CSV alone reproduces the predictions.
    with open(os.path.join(OUT, "test_images.csv")) as f:
        rows = [list(map(int, line.split(","))) for line in f.read().split("\n")[1:] if line]
    for r in rows:
        img = [r[2 + 8 * i: 10 + 8 * i] for i in range(8)]
        assert argmax(int_logits(img, cw, cb, dw, db)[0]) == r[1]
    big = max(abs(v) for lg in logits_all for v in lg)
    print(f"R = {R}, conv scale {sc}, dense scale {sd}")
    print(f"accuracy float {acc_float:.4f}, quantised {acc_q:.4f} on {len(x_te)} test images")
    print(f"max conv after ReLU {max_a}, max pooled {max_p}, max |logit| {big}")


if __name__ == "__main__":
    main()
