"""Kernels and array operators against numpy, on the clear backend."""

import numpy as np
import pytest

import hearth

RNG = np.random.default_rng(5)


@pytest.mark.parametrize("params,dtype", [("DIGITS_128", "digits6"), ("GATES_128", "i16")])
def test_dot_and_matmul(params, dtype):
    p = hearth.Program(params)
    x = p.input("x", dtype, shape=(2, 3))
    y = p.input("y", dtype, shape=(3, 2))
    v = p.input("v", dtype, shape=3)
    w = np.array([[3, -1], [0, 2], [-5, 4]])
    p.output("enc", hearth.matmul(x, y))
    p.output("clear", hearth.matmul(x, w, bias=np.array([7, -7])))
    p.output("vec", hearth.matmul(v, w))
    p.output("dot", hearth.dot(v, np.array([1, -2, 3]), bias=4))
    p.output("dot_enc", hearth.dot(v, x[0]))
    p.output("elementwise", x * 2 - y.T)
    prog = p.compile()
    for _ in range(20):
        a = RNG.integers(-40, 41, (2, 3))
        b = RNG.integers(-40, 41, (3, 2))
        c = RNG.integers(-40, 41, 3)
        enc, clear, vec, d, de, ew = prog.run_clear(a, b, c)
        np.testing.assert_array_equal(enc, a @ b)
        np.testing.assert_array_equal(clear, a @ w + [7, -7])
        np.testing.assert_array_equal(vec, c @ w)
        assert d == int(c @ [1, -2, 3]) + 4
        assert de == int(c @ a[0])
        np.testing.assert_array_equal(ew, a * 2 - b.T)


def conv_ref(x, w, b, stride, pad):
    x = np.pad(x, ((0, 0), (pad, pad), (pad, pad)))
    r, q, k, l = w.shape
    h = (x.shape[1] - k) // stride + 1
    ww = (x.shape[2] - l) // stride + 1
    out = np.zeros((r, h, ww), dtype=np.int64)
    for o in range(r):
        for i in range(h):
            for j in range(ww):
                out[o, i, j] = (x[:, i * stride:i * stride + k, j * stride:j * stride + l] * w[o]).sum() + b[o]
    return out


def test_conv_relu_pools():
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits5", shape=(1, 4, 4))
    w = RNG.integers(-3, 4, (2, 1, 3, 3))
    b = np.array([5, -5])
    y = hearth.conv2d(x, w, bias=b, padding=1)
    p.output("conv", y)
    p.output("relu", hearth.relu(y))
    p.output("max", hearth.max_pool(y, 2))
    p.output("avg", hearth.avg_pool(y, 2))
    prog = p.compile()
    for _ in range(5):
        xv = RNG.integers(-31, 32, (1, 4, 4))
        conv, relu, mx, avg = prog.run_clear(xv)
        ref = conv_ref(xv, w, b, 1, 1)
        np.testing.assert_array_equal(conv, ref)
        np.testing.assert_array_equal(relu, np.maximum(ref, 0))
        blocks = ref.reshape(2, 2, 2, 2, 2).transpose(0, 1, 3, 2, 4).reshape(2, 2, 2, 4)
        np.testing.assert_array_equal(mx, blocks.max(axis=3))
        np.testing.assert_array_equal(avg, np.floor_divide(blocks.sum(axis=3), 4))


def test_decorator():
    w = np.array([2, -3, 1, 4])

    @hearth.compile(x="i16[4]", w=w)
    def f(x, w):
        return {"dot": hearth.dot(x, w), "big": hearth.select(x > 3, x, 3 - x)}

    # One key for every type: the inputs' types do not pick the set.
    assert f.params == "DIGITS_128"
    xv = np.array([5, -2, 7, 1])
    d, big = f.run_clear(xv)
    assert d == int(xv @ w)
    np.testing.assert_array_equal(big, np.where(xv > 3, xv, 3 - xv))

    @hearth.compile(params="GATES_128", x="u8", y="u8")
    def h(x, y):
        return x ^ y

    assert h.params == "GATES_128"
    assert h.run_clear(200, 77) == 200 ^ 77

    @hearth.compile(a="digits4", b="twos8[2]")
    def g(a, b):
        return a * b[0] + b[1], a.max(b[1])

    assert g.params == "DIGITS_128"
    assert g.run_clear(-9, [100, -128]) == (-9 * 100 - 128, -9)
