"""Public-key encryption from Python: data owners encrypt a program's
inputs with only the public key (loaded from its file), their bundles are
joined with ``Bundle.combine``, run here and on a server with two tenants,
and decrypt exactly with the client key, against Python's integers."""

import subprocess

import numpy as np
import pytest

import hearth
from test_server import hearth_command, running_server


@pytest.fixture(scope="module")
def public_key_file(digits_keys, tmp_path_factory):
    """The key owner's public key as a file: what data owners are given."""
    key, _ = digits_keys
    path = tmp_path_factory.mktemp("public") / "public.key"
    key.public_key().save(path)
    return path


def three_inputs():
    """Three data owners' inputs, one each: two counts and a row."""
    p = hearth.Program("DIGITS_128")
    a = p.input("a", "digits8")
    b = p.input("b", "digits8", shape=3)
    c = p.input("c", "digits8")
    p.output("total", a + hearth.dot(b, np.array([1, 2, -3])) + c)
    p.output("larger", a.max(c))
    return p.compile()


A, B, C = 120, [-35, 7, 100], -77
EXPECTED = (A + B[0] + 2 * B[1] - 3 * B[2] + C, max(A, C))


def owners_bundles(prog, public_key_file):
    """Each owner loads the public key and encrypts only its own input."""
    return [
        hearth.PublicKey.load(public_key_file).encrypt(prog, A, only="a"),
        hearth.PublicKey.load(public_key_file).encrypt(prog, only=["b"], b=np.array(B)),
        hearth.PublicKey.load(public_key_file).encrypt(prog, c=C, only=("c",)),
    ]


def test_the_public_key_and_its_file(digits_keys, public_key_file, tmp_path):
    key, _ = digits_keys
    public = hearth.PublicKey.load(public_key_file)
    assert (public.params, public.key_id, public.compressed) == (key.params, key.key_id, True)
    assert repr(public) == f"PublicKey(DIGITS_128, id={key.key_id})"
    # A seed and a body: 16 KiB and a header.
    assert 16 * 1024 < public_key_file.stat().st_size < 17 * 1024
    public.save(tmp_path / "again.key")
    assert hearth.PublicKey.load(tmp_path / "again.key").key_id == key.key_id
    data = bytearray(public_key_file.read_bytes())
    data[-5] ^= 0x10
    (tmp_path / "bad.key").write_bytes(bytes(data))
    with pytest.raises(hearth.FileError):
        hearth.PublicKey.load(tmp_path / "bad.key")
    key.compressed_server_key().save(tmp_path / "server.key")
    with pytest.raises(hearth.FileError):
        hearth.PublicKey.load(tmp_path / "server.key")
    # GATES_128 has none (k N = 1536 is not a power of two).
    with pytest.raises(hearth.ParamsError, match="no public key"):
        hearth.ClientKey.generate("GATES_128").public_key()


def test_int_program_with_the_public_key(digits_keys, public_key_file):
    key, server = digits_keys
    public = hearth.PublicKey.load(public_key_file)
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits4", shape=3)
    k = p.input("k", "twos6")
    p.output("dot", hearth.dot(x, np.array([3, -2, 5]), bias=1))
    p.output("scaled", x * k)
    p.output("lt", x[0] < k)
    prog = p.compile()
    xs, kv = np.array([15, -7, 3]), -32
    bundle = public.encrypt(prog, xs, kv)
    assert bundle.key_id == key.key_id
    assert bundle.entries == [("x", "digits4", [3]), ("k", "twos6", [])]
    dot, scaled, lt = key.decrypt(prog.run(server, bundle, progress=False))
    assert dot == 15 * 3 + 7 * 2 + 3 * 5 + 1
    assert [int(v) for v in scaled] == [15 * -32, -7 * -32, 3 * -32]
    assert lt == 0
    # By name, in any order: the same values.
    nx, nk = key.decrypt(public.encrypt(prog, k=kv, x=[15, -7, 3]))
    assert ([int(v) for v in nx], nk) == ([15, -7, 3], kv)


def test_word_program_with_the_public_key(digits_keys, public_key_file):
    key, server = digits_keys
    public = hearth.PublicKey.load(public_key_file)

    @hearth.compile(a="u8", b="u8", c="i8[2]")
    def f(a, b, c):
        return a * b + 7, a < b, c[0] // c[1]

    out = key.decrypt(f.run(server, public.encrypt(f, 200, 3, np.array([-7, 2], dtype=np.int8)), progress=False))
    assert out == ((200 * 3 + 7) % 256, False, -7 // 2)
    assert out == f.run_clear(200, 3, [-7, 2]) == f.run_clear(c=[-7, 2], b=3, a=200)


def test_three_owners_combine(digits_keys, public_key_file):
    key, server = digits_keys
    prog = three_inputs()
    parts = owners_bundles(prog, public_key_file)
    assert [b.entries for b in parts] == [[("a", "digits8", [])], [("b", "digits8", [3])], [("c", "digits8", [])]]
    joined = hearth.Bundle.combine(parts)
    assert joined.entries == [e for b in parts for e in b.entries]
    a, b, c = key.decrypt(joined)
    assert (a, [int(v) for v in b], c) == (A, B, C)
    # Compact: one list per owner, read back from its bytes.
    again = hearth.Bundle.from_bytes(joined.to_bytes())
    assert key.decrypt(prog.run(server, again, progress=False)) == EXPECTED
    assert prog.run_clear(a=A, b=B, c=C) == EXPECTED
    # The key owner may be a data owner too: its own part under the client key.
    mine = key.encrypt(prog, only=["a", "b"], a=A, b=B)
    mixed = hearth.Bundle.combine(iter([mine, parts[2]]))
    assert key.decrypt(prog.run(server, mixed, progress=False)) == EXPECTED


def test_combine_refusals(digits_keys, public_key_file):
    key, server = digits_keys
    prog = three_inputs()
    pa, pb, pc = owners_bundles(prog, public_key_file)
    # Joined in another order, or one owner missing: the program refuses it.
    for wrong in ([pb, pa, pc], [pa, pc, pb], [pa, pb]):
        with pytest.raises(hearth.ShapeError, match="the program takes"):
            prog.run(server, hearth.Bundle.combine(wrong), progress=False)
    # Another key's bundle, another set's: not joined.
    stranger = hearth.ClientKey.generate("DIGITS_128")
    theirs = stranger.public_key().encrypt(prog, C, only="c")
    with pytest.raises(hearth.KeyMismatchError):
        hearth.Bundle.combine([pa, pb, theirs])
    with pytest.raises(hearth.KeyMismatchError):
        stranger.decrypt(hearth.Bundle.combine([pa, pb, pc]))
    gates = hearth.ClientKey.generate("GATES_128")

    @hearth.compile(params="GATES_128", c="u8")
    def neg(c):
        return -c

    with pytest.raises(hearth.KeyMismatchError):
        hearth.Bundle.combine([pa, pb, gates.encrypt(neg, 5)])
    # A public key encrypts only for programs on its set.
    with pytest.raises(hearth.KeyMismatchError):
        hearth.PublicKey.load(public_key_file).encrypt(neg, 5)
    with pytest.raises(hearth.ShapeError, match="at least one"):
        hearth.Bundle.combine([])
    with pytest.raises(TypeError):
        hearth.Bundle.combine([pa, 3])


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda e, p: e(p, 1, only=["a", "c"]), hearth.ShapeError, "consecutive"),
        (lambda e, p: e(p, 1, only=["b", "a"]), hearth.ShapeError, "consecutive"),
        (lambda e, p: e(p, 1, only="d"), hearth.ShapeError, "no input d"),
        (lambda e, p: e(p, only=[]), hearth.ShapeError, "no input named"),
        (lambda e, p: e(p, 1, only=5), TypeError, "only="),
        (lambda e, p: e(p, 1, [1, 2, 3]), hearth.ShapeError, "takes 3 inputs"),
        (lambda e, p: e(p, 1, [1, 2, 3], 3, 4), hearth.ShapeError, "takes 3 inputs"),
        (lambda e, p: e(p, 1, 2, only="a"), hearth.ShapeError, "2 values given by position"),
        (lambda e, p: e(p, 1, a=2, only=["a", "b"]), hearth.ShapeError, "a is given twice"),
        (lambda e, p: e(p, a=1, b=[1, 2, 3], d=2), hearth.ShapeError, "no input d"),
        (lambda e, p: e(p, b=[1, 2, 3], only="a"), hearth.ShapeError, "not among the inputs only= names"),
        (lambda e, p: e(p, a=1, c=2), hearth.ShapeError, "no value for b"),
        (lambda e, p: e(p, b=[1, 2], only="b"), hearth.ShapeError, "dims"),
        (lambda e, p: e(p, 1000, only="a"), hearth.RangeError, "does not fit"),
    ],
)
def test_inputs_by_name_and_only_are_checked(digits_keys, public_key_file, call, error, match):
    key, _ = digits_keys
    prog = three_inputs()
    # The client key and the public key take their arguments in one way.
    for encrypt in (key.encrypt, hearth.PublicKey.load(public_key_file).encrypt):
        with pytest.raises(error, match=match):
            call(encrypt, prog)


@pytest.fixture(scope="module")
def tenant_server(tmp_path_factory):
    """A hearth server with two tenants: its address and their tokens."""
    data = tmp_path_factory.mktemp("tenants")
    tokens = {}
    for name in ("clinic", "other"):
        made = subprocess.run(
            [hearth_command(), "server", "token", "add", name, "--data", data],
            capture_output=True,
            text=True,
            check=True,
        )
        tokens[name] = made.stdout.strip()
    with running_server(data) as url:
        yield url, tokens


def test_three_owners_through_the_server(tenant_server, digits_keys, public_key_file):
    url, tokens = tenant_server
    key, _ = digits_keys
    prog = three_inputs()
    # The key owner registers its server key with its tenant.
    clinic = hearth.Client(url, token=tokens["clinic"])
    assert clinic.upload_key(key.compressed_server_key())["key_id"] == key.key_id
    # Three owners, the public key only; their bundles joined and submitted.
    job = clinic.submit(prog, hearth.Bundle.combine(owners_bundles(prog, public_key_file)))
    assert job.wait(poll=0.05, progress=False)["state"] == "done"
    result = job.result()
    assert result.key_id == key.key_id
    assert key.decrypt(result) == EXPECTED
    # The other tenant's key cannot decrypt it, nor can that tenant fetch
    # the job or run on the clinic's key.
    stranger = hearth.ClientKey.generate("DIGITS_128")
    with pytest.raises(hearth.KeyMismatchError):
        stranger.decrypt(result)
    other = hearth.Client(url, token=tokens["other"])
    with pytest.raises(hearth.NotFoundError):
        other.job(job.id)
    with pytest.raises(hearth.NotFoundError) as e:
        other.submit(prog, hearth.Bundle.combine(owners_bundles(prog, public_key_file)))
    assert e.value.code == "unknown_key"
    # Joined in another order: refused before anything runs.
    pa, pb, pc = owners_bundles(prog, public_key_file)
    with pytest.raises(hearth.BadRequestError):
        clinic.submit(prog, hearth.Bundle.combine([pc, pa, pb]))
    job.delete()
