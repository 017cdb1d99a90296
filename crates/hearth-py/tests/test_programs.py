"""Random composed programs of every operator and method, both families,
on the clear backend, against Python's int arithmetic: exact for the
digits family, reduced to the width for words."""

import inspect
import random

import pytest

import hearth

WORDS = [("u8", 8, False), ("i8", 8, True), ("u16", 16, False), ("i32", 32, True), ("u64", 64, False), ("i128", 128, True)]


def wrap(v, bits, signed):
    v &= (1 << bits) - 1
    if signed and v >> (bits - 1):
        v -= 1 << bits
    return v


def word_div(x, y, bits, signed):
    """Python's floor division and modulo reduced to the width; a zero
    divisor as documented (hearth.Value)."""
    if y == 0:
        if not signed:
            return (1 << bits) - 1, x
        return (-1 if x >= 0 else 0), x
    return wrap(x // y, bits, signed), wrap(x % y, bits, signed)


def word_ops(bits, signed):
    w = lambda v: wrap(v, bits, signed)
    return [
        ("+", 2, lambda a, b: a + b, lambda x, y: w(x + y)),
        ("-", 2, lambda a, b: a - b, lambda x, y: w(x - y)),
        ("*", 2, lambda a, b: a * b, lambda x, y: w(x * y)),
        ("&", 2, lambda a, b: a & b, lambda x, y: w(x & y)),
        ("|", 2, lambda a, b: a | b, lambda x, y: w(x | y)),
        ("^", 2, lambda a, b: a ^ b, lambda x, y: w(x ^ y)),
        ("//", 2, lambda a, b: a // b, lambda x, y: word_div(x, y, bits, signed)[0]),
        ("%", 2, lambda a, b: a % b, lambda x, y: word_div(x, y, bits, signed)[1]),
        ("max", 2, lambda a, b: a.max(b), max),
        ("min", 2, lambda a, b: a.min(b), min),
        ("neg", 1, lambda a: -a, lambda x: w(-x)),
        ("~", 1, lambda a: ~a, lambda x: w(~x)),
        ("abs", 1, lambda a: abs(a), lambda x: w(abs(x))),
        ("relu", 1, lambda a: a.relu(), lambda x: max(x, 0)),
        ("square", 1, lambda a: a.square(), lambda x: w(x * x)),
        ("reverse_bits", 1, lambda a: a.reverse_bits(), lambda x: w(int(format(x & ((1 << bits) - 1), f"0{bits}b")[::-1], 2))),
        ("swap_bytes", 1, lambda a: a.swap_bytes(), lambda x: w(int.from_bytes((x & ((1 << bits) - 1)).to_bytes(bits // 8, "little"), "big"))),
    ]


def shift_ops(bits, signed, rng):
    k = rng.randrange(0, bits + 3)
    w = lambda v: wrap(v, bits, signed)
    r = k % bits
    m = (1 << bits) - 1
    return [
        ("<<", lambda a: a << k, lambda x: w(x << k)),
        (">>", lambda a: a >> k, lambda x: x >> k),
        ("rotl", lambda a: a.rotate_left(k), lambda x: w(((x & m) << r | (x & m) >> (bits - r)) & m)),
        ("rotr", lambda a: a.rotate_right(k), lambda x: w(((x & m) >> r | (x & m) << (bits - r)) & m)),
        ("+k", lambda a: a + (k * 37 - 50), lambda x: w(x + k * 37 - 50)),
        ("k-", lambda a: (k * 11) - a, lambda x: w(k * 11 - x)),
        ("*k", lambda a: a * (k - 3), lambda x: w(x * (k - 3))),
    ]


def random_word_program(rng, dtype, bits, signed):
    p = hearth.Program("GATES_128")
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    n_in = rng.randrange(1, 4)
    ins = [p.input(f"x{i}", dtype) for i in range(n_in)]
    vals = [rng.choice([lo, hi, 0, 1, -1 if signed else 2, rng.randint(lo, hi)]) for _ in ins]
    pool = list(zip(ins, vals))
    ops = word_ops(bits, signed)
    bools = []
    steps = rng.randrange(1, 5)
    for _ in range(steps):
        kind = rng.random()
        if kind < 0.6:
            name, arity, f, ref = rng.choice(ops)
            args = [rng.choice(pool) for _ in range(arity)]
            pool.append((f(*[a for a, _ in args]), ref(*[v for _, v in args])))
        elif kind < 0.85:
            name, f, ref = rng.choice(shift_ops(bits, signed, rng))
            a, v = rng.choice(pool)
            pool.append((f(a), ref(v)))
        else:
            (a, x), (b, y) = rng.choice(pool), rng.choice(pool)
            cmp = rng.choice(["<", "<=", ">", ">=", "==", "!="])
            c = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b, "==": a == b, "!=": a != b}[cmp]
            cv = {"<": x < y, "<=": x <= y, ">": x > y, ">=": x >= y, "==": x == y, "!=": x != y}[cmp]
            bools.append((c, cv))
            pool.append((hearth.select(c, a, b), x if cv else y))
    outs = pool[-2:] if len(pool) > 1 else pool
    for i, (v, _) in enumerate(outs):
        p.output(f"o{i}", v)
    for i, (c, _) in enumerate(bools[-1:]):
        p.output(f"b{i}", c)
    prog = p.compile()
    got = prog.run_clear(*vals)
    got = got if isinstance(got, tuple) else (got,)
    want = tuple(v for _, v in outs) + tuple(cv for _, cv in bools[-1:])
    return got, want, vals


def int_ops(rng):
    k = rng.randrange(0, 6)
    c = rng.randint(-300, 300)
    return [
        ("+", 2, lambda a, b: a + b, lambda x, y: x + y),
        ("-", 2, lambda a, b: a - b, lambda x, y: x - y),
        ("*", 2, lambda a, b: a * b, lambda x, y: x * y),
        ("max", 2, lambda a, b: a.max(b), max),
        ("min", 2, lambda a, b: a.min(b), min),
        ("neg", 1, lambda a: -a, lambda x: -x),
        ("~", 1, lambda a: ~a, lambda x: ~x),
        ("abs", 1, abs, abs),
        ("relu", 1, lambda a: a.relu(), lambda x: max(x, 0)),
        ("square", 1, lambda a: a.square(), lambda x: x * x),
        ("signum", 1, lambda a: a.signum(), lambda x: (x > 0) - (x < 0)),
        ("<<", 1, lambda a: a << k, lambda x: x << k),
        (">>", 1, lambda a: a >> k, lambda x: x >> k),
        ("//", 1, lambda a: a // (1 << k), lambda x: x // (1 << k)),
        ("%", 1, lambda a: a % (1 << k), lambda x: x % (1 << k)),
        ("+c", 1, lambda a: a + c, lambda x: x + c),
        ("c-", 1, lambda a: c - a, lambda x: c - x),
        ("*c", 1, lambda a: a * c, lambda x: x * c),
        ("<", 2, lambda a, b: a < b, lambda x, y: int(x < y)),
        ("==", 2, lambda a, b: a == b, lambda x, y: int(x == y)),
        (">=", 2, lambda a, b: a >= b, lambda x, y: int(x >= y)),
        ("wrap", 1, lambda a: a.wrap(k + 3), lambda x: wrap(x, k + 3, True)),
        ("abs_diff", 2, lambda a, b: a.abs_diff(b), lambda x, y: abs(x - y)),
        ("wrapping_add", 2, lambda a, b: a.wrapping_add(b, n=k + 3), lambda x, y: wrap(x + y, k + 3, True)),
        ("wrapping_mul", 2, lambda a, b: a.wrapping_mul(b, k + 3), lambda x, y: wrap(x * y, k + 3, True)),
        ("round", 1, lambda a: a.round(k), lambda x: ((x + (1 << k >> 1)) >> k) << k),
        ("widen", 1, lambda a: a.widen(k + 4), lambda x: x),
        ("abs_diff c", 1, lambda a: a.abs_diff(c), lambda x: abs(x - c)),
        ("pow", 1, lambda a: a.pow(k % 4), lambda x: x ** (k % 4)),
    ]


def test_table_methods_are_methods_and_refuse_what_they_cannot_build():
    """The methods installed from the operation tables: real methods with
    the rows' signatures and docs, typed errors for what they refuse."""
    sig = inspect.signature(hearth.Value.wrapping_add)
    assert list(sig.parameters) == ["self", "y", "n"]
    assert "abs_diff" in dir(hearth.Value) and "exact" in hearth.Value.abs_diff.__doc__
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits4")
    w = p.input("w", "u8")
    with pytest.raises(TypeError, match="not defined on u8"):
        w.abs_diff(w)
    with pytest.raises(TypeError, match="missing"):
        x.wrapping_add(x)
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.wrap(n=3, m=4)
    with pytest.raises(TypeError, match="takes 1 arguments"):
        x.wrap(3, 4)
    with pytest.raises(ValueError, match="int >= 0"):
        x.wrap(-1)
    with pytest.raises(TypeError, match="exact integers combine only"):
        x.abs_diff(w)
    q = hearth.Program("DIGITS_128")
    with pytest.raises(hearth.BuildError, match="two programs"):
        x.abs_diff(q.input("y", "digits4"))


def test_word_rows_are_methods_of_words_only():
    """The word table's Python rows (``count_ones``, ``bit``, ...) are
    methods built on a word's own row; on an exact integer or a boolean
    they are the TypeError of any word-only method."""
    for name in ["count_ones", "leading_zeros", "reverse_bits", "swap_bytes", "bit"]:
        assert inspect.getdoc(getattr(hearth.Value, name)), name
    assert list(inspect.signature(hearth.Value.bit).parameters) == ["self", "i"]
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits4")
    w = p.input("w", "u8")
    with pytest.raises(TypeError, match="count_ones is not defined on digits4"):
        x.count_ones()
    with pytest.raises(TypeError, match="bit is not defined on digits4"):
        x.bit(1)
    with pytest.raises(TypeError, match="reverse_bits is not defined on bool"):
        (w < 3).reverse_bits()
    with pytest.raises(TypeError, match="signum is not defined on u8"):
        w.signum()
    with pytest.raises(AttributeError, match="no operation named"):
        w._apply("no_such_op")
    assert w.bit(i=7).dtype == "bool" and w.count_ones().dtype == "u32"
    with pytest.raises(hearth.HearthError, match="bit 8 of a 8-bit word"):
        w.bit(8)


def random_int_program(rng):
    p = hearth.Program("DIGITS_128")
    ins, vals = [], []
    for i in range(rng.randrange(1, 4)):
        if rng.random() < 0.7:
            n = rng.randrange(1, 9)
            ins.append(p.input(f"x{i}", f"digits{n}"))
            lim = (1 << n) - 1
        else:
            n = rng.randrange(2, 9)
            ins.append(p.input(f"x{i}", f"twos{n}"))
            lim = None
        if lim is None:
            vals.append(rng.randint(-(1 << (n - 1)), (1 << (n - 1)) - 1))
        else:
            vals.append(rng.choice([lim, -lim, 0, rng.randint(-lim, lim)]))
    pool = list(zip(ins, vals))
    for _ in range(rng.randrange(1, 5)):
        name, arity, f, ref = rng.choice(int_ops(rng))
        args = [rng.choice(pool) for _ in range(arity)]
        pool.append((f(*[a for a, _ in args]), ref(*[v for _, v in args])))
    outs = pool[-2:] if len(pool) > 1 else pool
    for i, (v, _) in enumerate(outs):
        p.output(f"o{i}", v)
    got = p.compile().run_clear(*vals)
    got = got if isinstance(got, tuple) else (got,)
    return got, tuple(v for _, v in outs), vals


@pytest.mark.parametrize("seed", range(10))
def test_random_int_programs(seed):
    rng = random.Random(1000 + seed)
    for _ in range(25):
        got, want, vals = random_int_program(rng)
        assert got == want, (vals, got, want)


@pytest.mark.parametrize("dtype,bits,signed", WORDS)
def test_random_word_programs(dtype, bits, signed):
    rng = random.Random(hash(dtype) & 0xFFFF)
    for _ in range(40):
        got, want, vals = random_word_program(rng, dtype, bits, signed)
        assert got == want, (dtype, vals, got, want)


def test_word_methods_exhaustive_u8_i8():
    for dtype, signed in [("u8", False), ("i8", True)]:
        p = hearth.Program("GATES_128")
        x = p.input("x", dtype)
        p.output("ones", x.count_ones())
        p.output("lz", x.leading_zeros())
        p.output("b3", x.bit(3))
        p.output("wide", x.cast("i16" if signed else "u16"))
        prog = p.compile()
        for v in range(-128, 128) if signed else range(256):
            m = v & 0xFF
            got = prog.run_clear(v)
            assert got == (bin(m).count("1"), 8 - m.bit_length(), bool(m >> 3 & 1), v)


def test_bools_cast_to_every_word_type_and_comparisons_give_bools():
    # Rust's `(a < b) as T` for every word type T: 0 or 1, a Python int;
    # the comparison itself decrypts to a Python bool.
    for dtype, _, _ in WORDS:
        p = hearth.Program("GATES_128")
        a, b = p.input("a", "u8"), p.input("b", "u8")
        lt = a < b
        p.output("lt", lt)
        p.output("as", lt.cast(dtype))
        p.output("ne_as", (a != b).cast(dtype) + 1)
        prog = p.compile()
        for x, y in [(3, 200), (200, 3), (7, 7)]:
            got = prog.run_clear(x, y)
            assert type(got[0]) is bool and got[0] == (x < y), (dtype, got)
            assert type(got[1]) is int and got[1] == int(x < y), (dtype, got)
            assert got[2] == int(x != y) + 1, (dtype, got)


def test_overflowing_and_div_rem():
    p = hearth.Program("GATES_128")
    a, b = p.input("a", "i8"), p.input("b", "i8")
    s, so = a.overflowing_add(b)
    q, r = a.div_rem(b)
    p.output("s", s)
    p.output("so", so)
    p.output("q", q)
    p.output("r", r)
    prog = p.compile()
    rng = random.Random(7)
    for _ in range(200):
        x, y = rng.randint(-128, 127), rng.choice([rng.randint(-128, 127), 0, -1])
        tq = -1 if x >= 0 else 1
        tr = x
        if y != 0:
            tq = wrap(int(x / y) if abs(x) < 2**52 else 0, 8, True)
            tr = x - int(x / y) * y
        got = prog.run_clear(x, y)
        assert got == (wrap(x + y, 8, True), not -128 <= x + y <= 127, tq, wrap(tr, 8, True)), (x, y, got)


def test_int_to_word_and_back():
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits10")
    p.output("w", x.to_word("i8").to_int())
    p.output("u", x.to_word("u8"))
    prog = p.compile()
    for v in range(-1023, 1024, 37):
        assert prog.run_clear(v) == (wrap(v, 8, True), v & 0xFF)
