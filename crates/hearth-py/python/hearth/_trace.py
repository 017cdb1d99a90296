"""Tracing Python functions into hearth programs, and helpers on arrays."""

from __future__ import annotations

import inspect
import re
from typing import Any, Callable, Optional

import numpy as np

from ._hearth import CompiledProgram, Program

_SPEC = re.compile(r"^\s*([a-z]+[0-9]*)\s*(?:\[\s*([0-9,\s]*)\])?\s*$")


def _parse_spec(spec: str) -> tuple[str, tuple[int, ...]]:
    """``"i16[8]"`` -> ``("i16", (8,))``; ``"digits8"`` -> ``("digits8", ())``."""
    m = _SPEC.match(spec)
    if not m:
        raise ValueError(f"bad input type `{spec}`: write a type, then dims in brackets, e.g. 'i16[8]'")
    dims = m.group(2)
    shape = tuple(int(d) for d in dims.split(",") if d.strip()) if dims else ()
    return m.group(1), shape


#: The one key of every type (``digitsN``, ``twosN``, words, ``bool``),
#: whatever a function's inputs are.
_DEFAULT_PARAMS = "DIGITS_128"


def compile(
    params: Optional[str] = None, threads: Optional[int] = None, **specs: Any
) -> Callable[[Callable[..., Any]], CompiledProgram]:
    """Traces a function into a compiled program.

    Every parameter of the function is named in ``specs``: a string gives
    an encrypted input's type and dims (``"i16[8]"``, ``"digits12"``,
    ``"bool[3, 3]"``); anything else is a clear value passed as it is
    (numpy weights, ints), which the program holds as constants. The
    function returns a value or array (output ``"out"``), a tuple of them
    (``"out0"``, ``"out1"``, ...) or a dict (named outputs).

    ``params`` defaults to ``DIGITS_128``, the one key of every type
    (``GATES_128``, words and bools only, is faster for division and
    products by a clear constant: name it where those dominate)::

        @hearth.compile(x="i16[4]", w=np.array([1, -2, 3, 4]))
        def f(x, w):
            return hearth.dot(x, w)
    """

    def trace(fn: Callable[..., Any]) -> CompiledProgram:
        names = list(inspect.signature(fn).parameters)
        missing = [n for n in names if n not in specs]
        extra = [n for n in specs if n not in names]
        if missing or extra:
            raise TypeError(
                f"{fn.__name__}: give every parameter a type or a clear value "
                f"(missing: {missing}, unknown: {extra})"
            )
        inputs = {n: _parse_spec(s) for n, s in specs.items() if isinstance(s, str)}
        p = Program(params or _DEFAULT_PARAMS, threads)
        args = {}
        for n in names:
            if n in inputs:
                dtype, shape = inputs[n]
                args[n] = p.input(n, dtype, shape)
            else:
                args[n] = specs[n]
        out = fn(**args)
        if isinstance(out, dict):
            items = list(out.items())
        elif isinstance(out, tuple):
            items = [(f"out{i}", o) for i, o in enumerate(out)]
        else:
            items = [("out", out)]
        for name, value in items:
            p.output(name, value)
        return p.compile()

    return trace


def select(cond: Any, x: Any, y: Any) -> Any:
    """``x`` where ``cond`` else ``y``: booleans and words of one type
    (or ints), elementwise over arrays."""
    if any(isinstance(v, np.ndarray) for v in (cond, x, y)):
        from ._array import Array

        return np.frompyfunc(lambda c, a, b: c.select(a, b), 3, 1)(cond, x, y).view(Array)
    return cond.select(x, y)
