"""The 8x8 digit CNN on encrypted images.

The quantised model of ``data/digits/model.json`` (conv 3x3 with 4
channels, ReLU, 2x2 average pooling, dense 36 -> 10) classifies encrypted
8x8 images. The decrypted logits are compared with the integer model
computed in numpy and with the committed ``data/digits/test_logits.csv``.
All 50 test images are first checked on the clear backend (no keys,
seconds); then the first `--images` run encrypted as one program, every
bootstrap of every image scheduled together (about 10 minutes for 3 images
on 2 cores).

    python examples/python/digits_cnn.py --images 3

Exits with status 1 if any logit differs.
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

DATA = pathlib.Path(__file__).resolve().parents[2] / "data" / "digits"


def reference(x: np.ndarray, cw, cb, dw, db) -> np.ndarray:
    """The integer model in numpy (int64 is exact at these magnitudes)."""
    r, _, k, _ = cw.shape
    n = x.shape[1] - k + 1
    c = np.zeros((r, n, n), dtype=np.int64)
    for i in range(n):
        for j in range(n):
            c[:, i, j] = (cw[:, 0] * x[0, i : i + k, j : j + k]).sum(axis=(1, 2)) + cb
    a = np.maximum(c, 0)
    p = (a[:, 0::2, 0::2] + a[:, 0::2, 1::2] + a[:, 1::2, 0::2] + a[:, 1::2, 1::2]) // 4
    return dw @ p.reshape(-1) + db


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--images", type=int, default=3, help="images to run encrypted (0..50; 0: clear check only)")
    ap.add_argument("--threads", type=int, help="threads (default: all cores)")
    args = ap.parse_args()

    m = json.loads((DATA / "model.json").read_text())
    cw, cb = np.array(m["conv"]["weights"]), np.array(m["conv"]["bias"])
    dw, db = np.array(m["dense"]["weights"]), np.array(m["dense"]["bias"])
    images = np.load(DATA / "test_images.npy")
    with open(DATA / "test_logits.csv") as f:
        committed = np.array([[int(v) for k, v in r.items() if k != "image"] for r in csv.DictReader(f)])
    with open(DATA / "test_images.csv") as f:
        labels = [int(r["label"]) for r in csv.DictReader(f)]

    def build(n: int) -> hearth.CompiledProgram:
        """The CNN on `n` images at once (pixels 0..16: 5 signed-binary digits)."""

        @hearth.compile(x=f"digits5[{n}, 1, 8, 8]", threads=args.threads)
        def classify(x):
            logits = []
            for img in x:
                a = hearth.relu(hearth.conv2d(img, cw, bias=cb))
                p = hearth.avg_pool(a, 2).reshape(-1)
                logits.append(hearth.matmul(p, dw.T, bias=db))
            return np.stack(logits)

        return classify

    want = np.stack([reference(img[None], cw, cb, dw, db) for img in images])
    clear = build(len(images)).run_clear(images[:, None])
    ok = bool(np.array_equal(clear, want) and np.array_equal(want, committed))
    print(f"clear backend, {len(images)} images: logits {'match' if ok else 'DIFFER'} "
          "numpy and test_logits.csv")
    if args.images == 0:
        return 0 if ok else 1

    n = args.images
    classify = build(n)
    s = classify.stats
    print(f"program: {n} images, {s['pbs']} PBS, depth {s['depth']}, "
          f"{classify.memory_estimate(args.threads) / 2**20:.0f} MiB estimated")
    t = time.perf_counter()
    key = hearth.ClientKey.generate(classify.params)
    server_key = key.server_key()
    print(f"keys ({classify.params}): {time.perf_counter() - t:.1f} s")
    t = time.perf_counter()
    out = classify.run(server_key, key.encrypt(classify, images[:n, None]), threads=args.threads)
    logits = key.decrypt(out)
    print(f"encrypted run: {time.perf_counter() - t:.1f} s")
    for i in range(n):
        exact = np.array_equal(logits[i], committed[i])
        ok &= exact
        print(f"image {i}: label {labels[i]}, predicted {int(np.argmax(logits[i]))}, "
              f"logits {'exact' if exact else 'DIFFER: ' + str(logits[i])}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
