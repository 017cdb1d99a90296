"""hearth: exact integer arithmetic on TFHE-encrypted data.

Build a program from Python operators on its inputs, compile it, and run
it on encrypted numpy arrays::

    import hearth
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits8", shape=4)
    w = p.input("w", "digits8", shape=4)
    p.output("y", hearth.dot(x, w))
    prog = p.compile()
    key = hearth.ClientKey.generate("DIGITS_128")
    out = prog.run(key.server_key(), key.encrypt(prog, [1, 2, 3, 4], [5, 6, 7, 8]))
    assert key.decrypt(out) == 70

Types: ``digitsN`` (an exact integer of N signed-binary digits: results
grow as needed), ``twosN`` (an exact integer given in N-bit two's
complement), ``u8 ... u128`` and ``i8 ... i128`` (fixed-width words that
wrap like Python ints reduced to their width) and ``bool``.

The user's guide is `the book <../book/index.html>`_ (its sources are the
repository's ``docs/``); the Rust crate has `its own API reference
<../hearth/index.html>`_.
"""

from __future__ import annotations

from ._hearth import (
    BadRequestError,
    BuildError,
    Bundle,
    BusyError,
    CancelledError,
    Client,
    ClientKey,
    CompiledProgram,
    CompressedServerKey,
    FileError,
    FileTooLargeError,
    HearthError,
    Job,
    JobFailedError,
    KeyMismatchError,
    NotFoundError,
    NotReadyError,
    OverCostError,
    ParamsError,
    Program,
    PublicKey,
    RangeError,
    ServerError,
    ServerKey,
    ShapeError,
    TooLargeError,
    UnauthorizedError,
    Value,
    aes_ctr,
    avg_pool,
    backends,
    conv2d,
    dot,
    kreyvium,
    matmul,
    max_pool,
    parameter_sets,
    relu,
)
from ._array import Array
from ._ops import install as _install_ops
from ._trace import compile, select

_install_ops()

__all__ = [
    "Array",
    "BadRequestError",
    "BuildError",
    "Bundle",
    "BusyError",
    "CancelledError",
    "Client",
    "ClientKey",
    "CompiledProgram",
    "CompressedServerKey",
    "FileError",
    "FileTooLargeError",
    "HearthError",
    "Job",
    "JobFailedError",
    "KeyMismatchError",
    "NotFoundError",
    "NotReadyError",
    "OverCostError",
    "ParamsError",
    "Program",
    "PublicKey",
    "RangeError",
    "ServerError",
    "ServerKey",
    "ShapeError",
    "TooLargeError",
    "UnauthorizedError",
    "Value",
    "aes_ctr",
    "avg_pool",
    "backends",
    "compile",
    "conv2d",
    "dot",
    "kreyvium",
    "matmul",
    "max_pool",
    "parameter_sets",
    "relu",
    "select",
]
