"""``hearth.Array``: numpy object arrays of hearth values."""

from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np


def _elementwise(op: Callable[[Any, Any], Any], a: Any, b: Any) -> "Array":
    return np.frompyfunc(op, 2, 1)(a, b).view(Array)


class Array(np.ndarray):
    """A numpy object array of :class:`hearth.Value`.

    Arithmetic, bitwise operators, indexing, slicing, reshapes and
    transposes are numpy's, applied to each value. Two operators differ
    from a plain object array: comparisons give arrays of encrypted
    results (numpy would ask each for a truth value), and ``@`` is
    :func:`hearth.matmul`, one fused sum per output.
    """

    def __lt__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.lt, self, other)

    def __le__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.le, self, other)

    def __gt__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.gt, self, other)

    def __ge__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.ge, self, other)

    def __eq__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.eq, self, other)

    def __ne__(self, other: Any) -> "Array":  # type: ignore[override]
        return _elementwise(operator.ne, self, other)

    __hash__ = None  # type: ignore[assignment]

    def __matmul__(self, other: Any) -> Any:  # type: ignore[override]
        from ._hearth import matmul

        return matmul(self, other)

    def __rmatmul__(self, other: Any) -> Any:  # type: ignore[override]
        from ._hearth import matmul

        # other @ self == (self.T @ other.T).T for clear `other`.
        out = matmul(np.asarray(self).T, np.asarray(other).T)
        return out.T if isinstance(out, np.ndarray) else out
