"""A client / server round trip through files.

The client compiles a program, makes its keys and encrypts its inputs; the
server, a separate process that never sees the client key, runs the
program; the client decrypts. Everything between them is a file in one
directory: the program (``score.hprog``), the compressed server key
(``server.key``), the encrypted inputs (``in.hb``) and outputs
(``out.hb``). The server step could equally be the CLI's ``hearth run
--server-key server.key --program score.hprog --bundle in.hb --out out.hb``
or a job on ``hearth emu serve``.

    python examples/python/client_server.py             # all three steps
    python examples/python/client_server.py client DIR  # or one at a time
    python examples/python/client_server.py server DIR
    python examples/python/client_server.py decrypt DIR

Exits with status 1 if the decrypted outputs differ from Python's.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys
import tempfile
import time

import numpy as np

import hearth

WEIGHTS = np.array([3, -1, 2, 5])
THRESHOLD = 100


def client(d: pathlib.Path) -> None:
    """Compiles the program, makes keys, encrypts the inputs."""

    @hearth.compile(x="digits8[4]", w=WEIGHTS)
    def score(x, w):
        s = hearth.dot(x, w)
        return {"score": s, "approved": s >= THRESHOLD}

    x = np.array([17, -4, 30, 2])
    key = hearth.ClientKey.generate(score.params)
    key.save(d / "client.key")
    key.compressed_server_key().save(d / "server.key")
    score.save(d / "score.hprog")
    key.encrypt(score, x).save(d / "in.hb")
    (d / "plain.json").write_text(json.dumps(x.tolist()))
    for f in ("score.hprog", "server.key", "in.hb"):
        print(f"client: wrote {f} ({(d / f).stat().st_size:,} B)")


def server(d: pathlib.Path) -> None:
    """Runs the program on the encrypted inputs with the server key only."""
    program = hearth.CompiledProgram.load(d / "score.hprog")
    t = time.perf_counter()
    server_key = hearth.ServerKey.load(d / "server.key")
    print(f"server: key {server_key.key_id} decompressed in {time.perf_counter() - t:.1f} s")
    inputs = hearth.Bundle.load(d / "in.hb")
    t = time.perf_counter()
    program.run(server_key, inputs, progress=False).save(d / "out.hb")
    print(f"server: {program.stats['pbs']} PBS in {time.perf_counter() - t:.1f} s, wrote out.hb")


def decrypt(d: pathlib.Path) -> bool:
    """Decrypts the outputs and checks them against Python's integers."""
    key = hearth.ClientKey.load(d / "client.key")
    score, approved = key.decrypt(hearth.Bundle.load(d / "out.hb"))
    x = json.loads((d / "plain.json").read_text())
    want = sum(a * int(b) for a, b in zip(x, WEIGHTS))
    print(f"client: score {score}, approved {approved} (Python: {want}, {int(want >= THRESHOLD)})")
    return score == want and approved == int(want >= THRESHOLD)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("step", nargs="?", choices=["client", "server", "decrypt"])
    ap.add_argument("dir", nargs="?", type=pathlib.Path)
    args = ap.parse_args()
    if args.step:
        d = args.dir or pathlib.Path(".")
        if args.step == "client":
            client(d)
        elif args.step == "server":
            server(d)
        else:
            return 0 if decrypt(d) else 1
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for step in ("client", "server", "decrypt"):
            r = subprocess.run([sys.executable, __file__, step, tmp])
            if r.returncode:
                return r.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
