"""Python's overhead on an encrypted run: the same 32-bit word program run
from Python (``CompiledProgram.run``) and from Rust (the ``word_program``
example: ``CpuBackend`` + ``run_bundle``), alternating, on the same keys
and inputs.

    scripts/bench-python.sh [RUNS] [THREADS]

Checks first that the Rust program is byte for byte the Python one and
that both runs decrypt to Python's int arithmetic; then writes
``docs/results/python-overhead.{json,md}``: each side's times, medians and
their ratio (target: at most 1.05).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import platform
import random
import statistics
import subprocess
import tempfile
import time

import hearth

ROOT = pathlib.Path(__file__).resolve().parents[3]
MASK = 2**32 - 1


@hearth.compile(a="u32", b="u32", c="u32")
def program(a, b, c):
    return {"y": (a * b + c) ^ (a >> 7), "z": a < c}


def expected(a: int, b: int, c: int) -> tuple[int, bool]:
    return ((a * b + c) & MASK) ^ (a >> 7), a < c


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("rust", type=pathlib.Path, help="the word_program example binary")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", type=pathlib.Path, default=ROOT / "docs" / "results")
    args = ap.parse_args()

    rng = random.Random(2026)
    a, b, c = (rng.randrange(2**32) for _ in range(3))
    key = hearth.ClientKey.generate(program.params)
    server = key.server_key()
    with tempfile.TemporaryDirectory() as tmp:
        d = pathlib.Path(tmp)
        program.save(d / "program.hprog")
        server.save(d / "server.key")
        inputs = key.encrypt(program, a, b, c)
        inputs.save(d / "in.hb")
        python_s, rust_s = [], []
        for i in range(args.runs):
            t = time.perf_counter()
            out = program.run(server, inputs, threads=args.threads)
            python_s.append(time.perf_counter() - t)
            r = subprocess.run(
                [str(args.rust), str(d), str(args.threads)], capture_output=True, text=True, check=False
            )
            if r.returncode:
                raise SystemExit(f"word_program failed: {r.stderr.strip()}")
            rust_s.append(float(r.stdout))
            want = expected(a, b, c)
            got = (key.decrypt(out), key.decrypt(hearth.Bundle.load(d / "rust-out.hb")))
            if got != (want, want):
                raise SystemExit(f"run {i}: Python {got[0]}, Rust {got[1]}, want {want}")
            print(f"run {i}: Python {python_s[-1]:.3f} s, Rust {rust_s[-1]:.3f} s")

    s = program.stats
    py, rs = statistics.median(python_s), statistics.median(rust_s)
    result = {
        "bench": "python-overhead",
        "program": "u32: y = (a * b + c) ^ (a >> 7), z = a < c",
        "params": program.params,
        "pbs": s["pbs"],
        "depth": s["depth"],
        "threads": args.threads,
        "runs": args.runs,
        "python_s": python_s,
        "rust_s": rust_s,
        "python_median_s": py,
        "rust_median_s": rs,
        "ratio": py / rs,
        "machine": f"{platform.machine()}, {platform.python_implementation()} {platform.python_version()}",
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "python-overhead.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "python-overhead.md").write_text(
        f"### Python overhead: one 32-bit word program ({program.params}, {s['pbs']} PBS, "
        f"depth {s['depth']}, {args.threads} threads)\n\n"
        "| run from | median (s) | min (s) | max (s) |\n|---|---|---|---|\n"
        f"| Python `CompiledProgram.run` | {py:.3f} | {min(python_s):.3f} | {max(python_s):.3f} |\n"
        f"| Rust `CpuBackend` + `run_bundle` | {rs:.3f} | {min(rust_s):.3f} | {max(rust_s):.3f} |\n\n"
        f"Ratio Python / Rust (medians of {args.runs} alternating runs): **{py / rs:.3f}**. "
        "Same program bytes, keys and inputs; both results decrypt to Python's int arithmetic. "
        "`scripts/bench-python.sh`.\n"
    )
    print(f"ratio {py / rs:.3f} (Python {py:.3f} s, Rust {rs:.3f} s); wrote {args.out}/python-overhead.*")


if __name__ == "__main__":
    main()
