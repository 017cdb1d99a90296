"""Methods of ``Value`` written once, as rows of the library's operation
tables: each row Python offers becomes a method here, calling
``Value._apply`` with its name; its docstring and signature are the row's.
The stubs (``_hearth.pyi``) hold the same methods, written by ``stubs``
(``tests/test_package.py`` compares)."""

from __future__ import annotations

import inspect
from typing import Any, Callable

from . import _hearth

_P = inspect.Parameter


def _method(name: str, fields: list[tuple[str, str]], doc: str) -> Callable[..., Any]:
    def method(self: _hearth.Value, *args: Any, **kwargs: Any) -> _hearth.Value:
        return self._apply(name, *args, **kwargs)

    method.__name__ = name
    method.__qualname__ = f"Value.{name}"
    method.__doc__ = doc
    params = [_P("self", _P.POSITIONAL_OR_KEYWORD)]
    params += [_P(f, _P.POSITIONAL_OR_KEYWORD, annotation=t) for f, t in fields]
    method.__signature__ = inspect.Signature(params, return_annotation="Value")  # type: ignore[attr-defined]
    return method


def install() -> None:
    """Adds each table operation to ``Value`` as a method."""
    for name, fields, doc in _hearth._table_ops():
        setattr(_hearth.Value, name, _method(name, fields, doc))


def stubs() -> str:
    """The table operations' part of the stubs, as ``_hearth.pyi`` has it."""
    out = []
    for name, fields, doc in _hearth._table_ops():
        params = "".join(f", {f}: {t}" for f, t in fields)
        body = doc.replace("\n", "\n        ")
        out.append(f"    def {name}(self{params}) -> Value:\n        \"\"\"{body}\"\"\"\n")
    return "".join(out)
