"""Encrypted runs on real parameters (one per family), files between a
client and a server, the GIL released during a run, Ctrl-C."""

import _thread
import signal
import sys
import threading
import time

import numpy as np
import pytest

import hearth


def test_digits_family_encrypted(digits_keys, tmp_path):
    key, _ = digits_keys
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits4", shape=3)
    k = p.input("k", "twos6")
    p.output("dot", hearth.dot(x, np.array([3, -2, 5]), bias=1))
    p.output("scaled", x * k)
    p.output("lt", x[0] < k)
    prog = p.compile()
    # Client: compressed server key, program and inputs as files.
    key.compressed_server_key().save(tmp_path / "server.key")
    prog.save(tmp_path / "p.hprog")
    xs, kv = np.array([15, -7, 3]), -32
    key.encrypt(prog, xs, kv).save(tmp_path / "in.hbundle")
    # Server: only files and no client key.
    server = hearth.ServerKey.load(tmp_path / "server.key")
    sprog = hearth.CompiledProgram.load(tmp_path / "p.hprog")
    out = sprog.run(server, hearth.Bundle.load(tmp_path / "in.hbundle"), progress=False)
    packed = sprog.pack(server, out)
    assert packed.packed and not out.packed
    assert len(packed.to_bytes()) * 20 < len(out.to_bytes())
    (tmp_path / "out.hbundle").write_bytes(packed.to_bytes())
    dot, scaled, lt = key.decrypt(hearth.Bundle.load(tmp_path / "out.hbundle"))
    assert dot == int(xs @ [3, -2, 5]) + 1
    np.testing.assert_array_equal(scaled, xs * kv)
    assert lt == int(15 < kv)
    full = key.decrypt(out)
    assert (full[0], list(full[1]), full[2]) == (dot, list(scaled), lt)
    assert (dot, list(scaled), lt) == (lambda r: (r[0], list(r[1]), r[2]))(prog.run_clear(xs, kv))


def test_words_family_encrypted(digits_keys):
    # Words on the one key of every type, the decorator's default.
    key, server = digits_keys

    @hearth.compile(a="u8", b="u8", c="i8[2]")
    def f(a, b, c):
        return a * b + 7, a < b, c[0] // c[1]

    args = (200, 3, [-7, 2])
    out = key.decrypt(f.run(server, key.encrypt(f, *args), threads=2, progress=True))
    assert out == ((200 * 3 + 7) % 256, False, -4)
    assert out == f.run_clear(*args)


def long_program(n, kind="digits12"):
    p = hearth.Program("DIGITS_128")
    x = p.input("x", kind, shape=n)
    p.output("y", hearth.dot(x, x))
    return p.compile()


def test_gil_released_during_run(digits_keys):
    key, server = digits_keys
    prog = long_program(1, "digits8")  # 119 bootstraps: a second or two
    bundle = key.encrypt(prog, [-200])
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(time.perf_counter())
            time.sleep(0.01)

    t = threading.Thread(target=count)
    start = time.perf_counter()
    t.start()
    out = prog.run(server, bundle, progress=False)
    end = time.perf_counter()
    stop.set()
    t.join()
    assert key.decrypt(out) == 200**2
    during = [x for x in ticks if start < x < end]
    # A thread sleeping 10 ms per tick: at least a third of its ticks.
    assert end - start > 0.5
    assert len(during) >= (end - start) / 0.01 / 3, (len(during), end - start)


def test_ctrl_c_stops_a_run(digits_keys):
    key, server = digits_keys
    prog = long_program(24)
    bundle = key.encrypt(prog, list(range(24)))
    # Python's own Ctrl-C handler: a process started in the background
    # inherits SIGINT ignored, and interrupt_main() then does nothing.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(1.0, _thread.interrupt_main)
    start = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            prog.run(server, bundle, progress=False)
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    stopped = time.perf_counter() - start
    timer.join()
    # The whole run takes several times longer than this.
    assert stopped < 4.0, stopped
    # Nothing is left running: the next run works and is exact.
    small = long_program(1, "digits4")
    assert key.decrypt(small.run(server, key.encrypt(small, [-7]), progress=False)) == 7**2


def test_backend_choice(digits_keys):
    key, server = digits_keys
    prog = long_program(2, "digits4")
    inputs = key.encrypt(prog, [5, -9])
    with pytest.raises(ValueError, match="use \"cpu\" or \"gpu\""):
        prog.run(server, inputs, backend="tpu")
    if "gpu" in hearth.backends():
        out = prog.run(server, inputs, backend="gpu", progress=False)
    else:
        # "gpu" where it cannot run warns and gives the exact result on the CPU.
        with pytest.warns(RuntimeWarning, match="running on the CPU"):
            out = prog.run(server, inputs, backend="gpu", progress=False)
    assert key.decrypt(out) == 25 + 81


def test_progress_is_shown(digits_keys, capfd, monkeypatch):
    key, server = digits_keys
    prog = long_program(1, "digits4")
    pbs = prog.stats["pbs"]
    inputs = key.encrypt(prog, [-3])
    # Without tqdm: a plain line on stderr (every 10 s, and at the end).
    monkeypatch.setitem(sys.modules, "tqdm", None)
    out = prog.run(server, inputs, threads=1)
    assert f"hearth: {pbs}/{pbs} PBS" in capfd.readouterr().err
    assert key.decrypt(out) == 9
    monkeypatch.undo()
    pytest.importorskip("tqdm")
    out = prog.run(server, inputs, threads=1)
    assert f"{pbs}/{pbs}" in capfd.readouterr().err
    assert key.decrypt(out) == 9
    # progress=False prints nothing.
    prog.run(server, inputs, threads=1, progress=False)
    assert capfd.readouterr().err == ""
