"""The compute server from Python: ``hearth.Client`` against a ``hearth
server`` started here (the command built by the test command), with real
keys: a key upload, a job waited for with progress, its result decrypted
against Python's integers, and refusals raised as typed exceptions."""

import contextlib
import os
import pathlib
import subprocess

import pytest

import hearth

ROOT = pathlib.Path(__file__).resolve().parents[3]


def hearth_command() -> pathlib.Path:
    """The ``hearth`` command: $HEARTH_BIN, else the workspace's release
    build (made here if the Rust tests have not made it)."""
    exe = pathlib.Path(os.environ.get("HEARTH_BIN", ROOT / "target" / "release" / "hearth"))
    if not exe.exists():
        subprocess.run(
            ["cargo", "build", "--release", "-p", "hearth-cli", "--no-default-features"],
            cwd=ROOT,
            check=True,
        )
    return exe


@contextlib.contextmanager
def running_server(data, *options):
    """A ``hearth server`` on a free loopback port over the data folder
    `data`, with `options`: its URL while the block runs, stopped after."""
    proc = subprocess.Popen(
        [hearth_command(), "server", "--listen", "127.0.0.1:0", "--data", data,
         "--threads", "2", "--quiet", *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on "), line
        yield line.split()[-1]
    finally:
        proc.terminate()
        proc.wait(timeout=30)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with running_server(tmp_path_factory.mktemp("server"), "--max-pbs", "100") as url:
        yield url


def test_a_job_runs_on_the_server(server, digits_keys, capsys, tmp_path):
    key, _ = digits_keys

    @hearth.compile(a="u8", b="u8")
    def add(a, b):
        return a + b, a < b

    client = hearth.Client(server)
    assert client.url == server
    info = client.info()
    assert info["max_pbs"] == 100 and info["backend"] == "cpu, 2 threads"
    first = client.upload_key(key.compressed_server_key())
    assert first["new"] and first["compressed"] and first["params"] == "DIGITS_128"
    key.compressed_server_key().save(tmp_path / "server.key")
    again = client.upload_key(tmp_path / "server.key")
    assert not again["new"] and again["key_id"] == first["key_id"]

    job = client.submit(add, key.encrypt(add, 200, 100))
    assert (job.pbs, job.depth, len(job.id)) == (add.stats["pbs"], add.stats["depth"], 32)
    done = job.wait(poll=0.02, progress=True)
    assert done["state"] == "done" and done["job_id"] == job.id
    assert "PBS" in capsys.readouterr().err
    assert key.decrypt(job.result()) == ((200 + 100) % 256, False)
    assert client.job(job.id).status()["state"] == "done"
    job.delete()
    with pytest.raises(hearth.NotFoundError) as e:
        job.status()
    assert (e.value.code, e.value.status) == ("not_found", 404)


def test_a_kept_result_feeds_later_jobs(server, digits_keys):
    """``submit(..., after=job)``: the server joins the finished job's
    result (kept ``unpacked``) before the later bundle's entries, so the
    later bundle carries only its own input (here: a sum kept, then added
    to). A packed result cannot be taken."""
    key, _ = digits_keys
    client = hearth.Client(server)
    client.upload_key(key.compressed_server_key())
    p = hearth.Program("DIGITS_128")
    p.output("s", p.input("a", "u8") + p.input("b", "u8"))
    first = p.compile()
    q = hearth.Program("DIGITS_128")
    q.output("t", q.input("s", "u8") + q.input("c", "u8"))
    later = q.compile()
    kept = client.submit(first, key.encrypt(first, 200, 50), unpacked=True)
    kept.wait(poll=0.02, progress=False)
    packed = client.submit(first, key.encrypt(first, 1, 2))
    packed.wait(poll=0.02, progress=False)
    with pytest.raises(hearth.BadRequestError):
        client.submit(later, key.encrypt(later, c=1, only="c"), after=packed)
    for c in (5, 10):
        job = client.submit(later, key.encrypt(later, c=c, only="c"), after=kept)
        job.wait(poll=0.02, progress=False)
        assert key.decrypt(job.result()) == (250 + c) % 256
    with pytest.raises(hearth.BadRequestError):
        client.submit(later, key.encrypt(later, 1, 2), after=kept)
    kept.delete()
    with pytest.raises(hearth.NotFoundError):
        client.submit(later, key.encrypt(later, c=1, only="c"), after=kept)


def test_refusals_are_typed_exceptions(server, digits_keys):
    key, _ = digits_keys
    client = hearth.Client(server)
    client.upload_key(key.compressed_server_key())

    @hearth.compile(a="u16", b="u16")
    def product(a, b):
        return a * b

    assert product.stats["pbs"] > 100
    with pytest.raises(hearth.OverCostError) as e:
        client.submit(product, key.encrypt(product, 3, 4))
    assert (e.value.code, e.value.status) == ("over_cost", 422)
    assert isinstance(e.value, hearth.ServerError)
    assert isinstance(e.value, hearth.HearthError)
    assert "100" in str(e.value)

    stranger = hearth.ClientKey.generate("GATES_128")

    @hearth.compile(params="GATES_128", a="u8")
    def neg(a):
        return -a

    with pytest.raises(hearth.NotFoundError) as e:
        client.submit(neg, stranger.encrypt(neg, 5))
    assert e.value.code == "unknown_key"
    with pytest.raises(hearth.NotFoundError):
        client.job("0" * 32)
    with pytest.raises(hearth.BadRequestError) as e:
        client.upload_key(b"not a key")
    assert e.value.code == "bad_key"
    with pytest.raises(TypeError):
        client.upload_key(42)


def test_an_unreachable_server_is_a_server_error():
    with pytest.raises(hearth.ServerError) as e:
        hearth.Client("http://127.0.0.1:9").info()
    assert e.value.code is None
    with pytest.raises(hearth.ServerError):
        hearth.Client("ftp://example.org")
