"""Type stubs for ``hearth._hearth``, the compiled part of the package.

Names are re-exported by ``hearth``; import them from there.
"""

from __future__ import annotations

from os import PathLike
from typing import Any, Iterable, Optional, Sequence, Union

import numpy as np
import numpy.typing as npt

from ._array import Array

_Path = Union[str, PathLike[str]]
_Shape = Union[int, Sequence[int], None]
#: A clear operand: a Python int (or numpy integer) or a bool.
_Clear = Union[int, bool, np.integer[Any], np.bool_]
_Operand = Union["Value", _Clear]
#: An encrypted array (``Program.input(..., shape=...)``) or a nested list
#: or object array of values.
_Values = Union[Array, npt.NDArray[np.object_], Sequence[Any]]
#: Inputs named by ``encrypt(..., only=...)``: one name or several.
_Only = Union[str, Sequence[str], None]
# ``decrypt`` and ``run_clear`` return ``Any``: an int, a bool or a numpy
# array per output (a tuple of them for several outputs), which the
# program's signature decides at run time.

def _table_ops() -> list[tuple[str, list[tuple[str, str]], str]]: ...
def parameter_sets() -> list[str]:
    """The names of the parameter sets a program can use (secure only)."""

def backends() -> list[str]:
    """The backends ``CompiledProgram.run`` can use here: ``"cpu"``, and
    ``"gpu"`` in a wheel built with the ``gpu`` feature on a machine with
    a usable CUDA device."""

def aes_ctr(key: bytes, counter: bytes, data: bytes) -> bytes:
    """AES-128 in counter mode: `data` XORed with the keystream of `key`
    from the counter block `counter` (16 bytes: a 128-bit big-endian
    counter, one step per 16-byte block, wrapping at 2^128). Encrypts and
    decrypts alike. Never use one key and counter block twice: each
    message starts after the last block of the one before."""

def kreyvium(key: bytes, iv: bytes, data: bytes) -> bytes:
    """Kreyvium: `data` XORed with the keystream of `key` and `iv` (16
    bytes each). Encrypts and decrypts alike. Never use one key and IV
    twice."""

class HearthError(Exception):
    """Base class of every hearth error."""

class ParamsError(HearthError):
    """An unknown parameter set, an INSECURE test set (refused by the
    Python package), or one that cannot carry the program."""

class BuildError(HearthError):
    """The builder refused the program: a noise budget, a lookup table, a
    value of another program, or an operation after an earlier error."""

class KeyMismatchError(HearthError):
    """A key, value bundle or program of another key or parameter set."""

class FileError(HearthError):
    """A file could not be read or written, or it is damaged, truncated,
    forged or of another kind."""

class TooLargeError(HearthError):
    """Over a size, work or memory limit (a file, a program, a run)."""

class FileTooLargeError(FileError, TooLargeError):
    """A file whose stated size is over its limit: a FileError and a
    TooLargeError."""

class ShapeError(HearthError):
    """Values of the wrong type, count or dimensions for a program or an
    operation."""

class RangeError(HearthError):
    """A value does not fit its type (an input out of its digits' range,
    a word constant too wide)."""

class CancelledError(HearthError):
    """A run stopped before it finished (by a cancel request)."""

class ServerError(HearthError):
    """A compute server refused a request, or could not be reached."""

    code: Optional[str]
    """The server's error code (``"over_cost"``, ...); None when no
    answer came."""
    status: Optional[int]
    """The HTTP status; None for a failed job."""

class UnauthorizedError(ServerError):
    """No API token, or one the server does not know: ``unauthorized``."""

class NotFoundError(ServerError):
    """No such job or key for this tenant: ``not_found``,
    ``unknown_key``."""

class OverCostError(ServerError):
    """Over the server's limits on one job or request: ``over_cost``,
    ``too_large``."""

class BusyError(ServerError):
    """At a limit that time (or deleting results and keys) lifts (try
    again later): ``queue_full``, ``too_many_keys``, ``key_limit``,
    ``queue_limit``, ``daily_limit``, ``storage_limit``,
    ``insufficient_storage``."""

class NotReadyError(ServerError):
    """Not yet: ``not_ready`` (the job is queued or running),
    ``key_in_use``."""

class BadRequestError(ServerError):
    """The server could not use what was sent: ``bad_request``,
    ``bad_program``, ``bad_bundle``, ``bad_key``, ``insecure_params``,
    ``wrong_key``, ``timeout``, ``unsupported_media_type``,
    ``misdirected``."""

class JobFailedError(ServerError):
    """The job failed; ``code`` is its failure's (``job_failed``,
    ``expired``, ``crashed``, ...)."""

class Program:
    """A program being built: declare inputs, compute on them with Python
    operators and the kernels, mark outputs, then ``compile``."""

    def __init__(self, params: str, threads: Optional[int] = None) -> None:
        """A new program on the parameter set named `params` (see
        ``hearth.parameter_sets()``), its algorithms planned for `threads`
        threads (default: this machine's cores)."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    def input(self, name: str, dtype: str, shape: _Shape = None) -> Any:
        """An encrypted input named `name` of type `dtype` (``"digits8"``,
        ``"twos16"``, ``"u32"``, ``"i64"``, ``"bool"``, ...): one
        :class:`Value`, or an :class:`Array` of values when `shape` is
        given."""
    def constant(self, value: int, dtype: str) -> Value:
        """A clear value of type `dtype` (free: no bootstrap)."""
    def output(self, name: str, value: Union[Value, _Values]) -> None:
        """Marks `value` (a value, or an array of values of one type) as
        the output named `name`. Exact integers of different lengths in
        one array are widened to the longest."""
    def compile(self) -> CompiledProgram:
        """The finished program: its circuit built, every noise budget
        checked. The Program cannot be used after."""

class Value:
    """An encrypted value of a program being built: an exact integer
    (``digitsN`` / ``twosN``), a fixed-width word (``u8`` ... ``i128``)
    or a ``bool``.

    Operators build new values; nothing is computed until the compiled
    program runs. Exact integers grow as needed; words wrap like Python
    ints reduced to their width (``//`` and ``%`` floor, shifts of the
    width or more shift everything out). ``bool(value)`` raises: the value
    is encrypted.
    """

    @property
    def dtype(self) -> str:
        """The type's name (``"digits9"``, ``"u32"``, ``"bool"``, ...)."""
    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __add__(self, other: _Operand) -> Value: ...
    def __radd__(self, other: _Operand) -> Value: ...
    def __sub__(self, other: _Operand) -> Value: ...
    def __rsub__(self, other: _Operand) -> Value: ...
    def __mul__(self, other: _Operand) -> Value: ...
    def __rmul__(self, other: _Operand) -> Value: ...
    def __floordiv__(self, other: _Operand) -> Value: ...
    def __rfloordiv__(self, other: _Operand) -> Value: ...
    def __mod__(self, other: _Operand) -> Value: ...
    def __rmod__(self, other: _Operand) -> Value: ...
    def __and__(self, other: _Operand) -> Value: ...
    def __rand__(self, other: _Operand) -> Value: ...
    def __or__(self, other: _Operand) -> Value: ...
    def __ror__(self, other: _Operand) -> Value: ...
    def __xor__(self, other: _Operand) -> Value: ...
    def __rxor__(self, other: _Operand) -> Value: ...
    def __lshift__(self, other: _Operand) -> Value: ...
    def __rshift__(self, other: _Operand) -> Value: ...
    def __neg__(self) -> Value: ...
    def __pos__(self) -> Value: ...
    def __invert__(self) -> Value: ...
    def __abs__(self) -> Value: ...
    def __lt__(self, other: _Operand) -> Value: ...
    def __le__(self, other: _Operand) -> Value: ...
    def __gt__(self, other: _Operand) -> Value: ...
    def __ge__(self, other: _Operand) -> Value: ...
    def __eq__(self, other: object) -> Value: ...  # type: ignore[override]
    def __ne__(self, other: object) -> Value: ...  # type: ignore[override]
    def max(self, other: _Operand) -> Value:
        """The larger of the two (`other` a value or an int)."""
    def min(self, other: _Operand) -> Value:
        """The smaller of the two."""
    def relu(self) -> Value:
        """``max(self, 0)``."""
    def square(self) -> Value:
        """``self * self``."""
    def shr_floor(self, k: int) -> Value:
        """``floor(self / 2**k)`` for any ``k``."""
    def to_word(self, dtype: str) -> Value:
        """An integer modulo ``2**bits`` as a word of type `dtype`, or a
        boolean as an unsigned word (0 or 1)."""
    def to_int(self) -> Value:
        """A word's (or boolean's) exact value as an exact integer."""
    def cast(self, dtype: str) -> Value:
        """Rust's ``as``: a word as another word type (truncated, or
        extended by its own signedness), or a boolean as a word (0 or 1)."""
    def div_rem(self, other: _Operand) -> tuple[Value, Value]:
        """Rust's truncating ``(self / other, self % other)`` (words; a
        zero divisor gives all ones, or -1 / 1 when signed, and the
        dividend)."""
    def checked_div(self, other: _Operand) -> tuple[Value, Value]:
        """Rust's ``checked_div``: the quotient and whether it is
        defined."""
    def overflowing_add(self, other: _Operand) -> tuple[Value, Value]:
        """The wrapped sum and whether it overflowed."""
    def overflowing_sub(self, other: _Operand) -> tuple[Value, Value]:
        """The wrapped difference and whether it overflowed."""
    def overflowing_mul(self, other: _Operand) -> tuple[Value, Value]:
        """The wrapped product and whether it overflowed."""
    def rotate_left(self, amount: _Operand) -> Value:
        """Rotated left by a clear amount (modulo the width) or an
        encrypted unsigned word."""
    def rotate_right(self, amount: _Operand) -> Value:
        """Rotated right."""
    def select(self, x: _Operand, y: _Operand) -> Value:
        """``if self { x } else { y }`` for a boolean and two words of
        one type."""
    def _apply(self, name: str, *args: Any, **kwargs: Any) -> Value: ...
    # The operation tables' methods (hearth._ops.stubs); regenerate with
    # HEARTH_BLESS=1 pytest crates/hearth-py/tests/test_package.py
    def signum(self) -> Value:
        """The sign: -1, 0 or 1 (exact integers)."""
    def round(self, i: int) -> Value:
        """Rounded to a multiple of ``2**i`` (exact integers)."""
    def to_bits(self) -> Value:
        """The two's-complement bits of ``x`` (one more than its digits) as
        an integer's digits: its value is ``x`` modulo ``2**(len(x) + 1)``."""
    def wrap(self, n: int) -> Value:
        """Reduced to ``n``-bit two's complement (exact integers)."""
    def wrapping_add(self, y: _Operand, n: int) -> Value:
        """``(x + y)`` reduced to ``n``-bit two's complement."""
    def wrapping_mul(self, y: _Operand, n: int) -> Value:
        """``(x * y)`` reduced to ``n``-bit two's complement (a square,
        ``x.wrapping_mul(x, n)``, in about half the bootstraps)."""
    def widen(self, n: int) -> Value:
        """The same integer on at least ``n`` digits (zero digits on top)."""
    def abs_diff(self, y: _Operand) -> Value:
        """``|x - y|``, exact."""
    def pow(self, e: int) -> Value:
        """``x ** e`` for a clear exponent ``e``, exact (``x ** 0`` is 1)."""
    def count_ones(self) -> Value:
        """The bits set, as a ``u32`` (Rust's ``count_ones``; words)."""
    def leading_zeros(self) -> Value:
        """The leading zero bits, as a ``u32`` (Rust's ``leading_zeros``; words)."""
    def reverse_bits(self) -> Value:
        """The bits in reverse order (words)."""
    def swap_bytes(self) -> Value:
        """The bytes in reverse order (words of whole bytes)."""
    def bit(self, i: int) -> Value:
        """Bit ``i`` (0 the lowest) as a boolean (words)."""
    def aes_key_schedule(self) -> Value:
        """AES-128's key schedule, for transciphering: the eleven round keys of
        a 128-bit key word (the key's bytes are its value's little-endian
        bytes), as one unsigned word of 1 408 bits, round key `r`'s bit `i`
        of byte `n` at `128 r + 8 n + i`. 40 S-boxes: a program that
        outputs it lets later programs start from the round keys."""
    def aes_ctr(self, counter: Value, sealed: Value) -> Value:
        """AES-128 in counter mode, for transciphering: the data under
        `sealed`, the owner's ciphertext as an unsigned word (the bytes are
        its value's little-endian bytes; any width), given `round_keys`
        from `aes_key_schedule` and `counter`, the first counter block as a
        128-bit word (the block is its value's big-endian bytes, as
        `Ctr128BE` and tfhe-rs's `AesIv` count). Keystream block `j` is
        `AES(counter + j)`: folded for a clear counter, one encrypted
        addition per block otherwise."""
    def kreyvium(self, iv: _Operand, sealed: Value) -> Value:
        """Kreyvium, for transciphering: the data under `sealed` (as for
        `aes_ctr`), given `key` and `iv`, 128-bit words whose values'
        little-endian bytes are the key's and IV's bytes (the published
        vectors' order). The warm-up's 1 152 rounds, then four bootstraps
        a data bit."""
    # End of the operation tables' methods.

class CompiledProgram:
    """A finished program: its circuit, signature and cost. Holds no key;
    save it, send it, run it on a server."""

    @staticmethod
    def load(path: _Path) -> CompiledProgram:
        """Reads a program file, building it again with every check."""
    def save(self, path: _Path) -> None:
        """Writes the program file (ops, signature and cost; no key)."""
    @staticmethod
    def from_bytes(data: bytes) -> CompiledProgram:
        """Reads program bytes (``to_bytes``)."""
    def to_bytes(self) -> bytes:
        """The program as file bytes."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    @property
    def stats(self) -> dict[str, Any]:
        """Its cost from the count backend: ``pbs`` (bootstraps),
        ``depth``, ``level_widths`` (bootstraps per level), ``peak_live``
        (most ciphertexts alive), ``inputs`` and ``outputs``
        (ciphertexts)."""
    def memory_estimate(self, threads: Optional[int] = None) -> int:
        """Estimated peak memory of an encrypted run on `threads` threads
        (default: this machine's cores), in bytes."""
    @property
    def signature(self) -> dict[str, list[tuple[str, str, list[int]]]]:
        """Inputs and outputs: ``{"inputs": [(name, dtype, dims)],
        "outputs": [...]}``."""
    def run_clear(self, *args: Any, **named: Any) -> Any:
        """Runs on plain values with the clear backend (no keys, no
        noise): the outputs as ``ClientKey.decrypt`` gives them. Inputs as
        ``ClientKey.encrypt`` takes them (by position, then by name). For
        tests and debugging."""
    def run(
        self,
        server_key: ServerKey,
        inputs: Bundle,
        backend: str = "cpu",
        threads: Optional[int] = None,
        progress: bool = True,
    ) -> Bundle:
        """Runs on encrypted inputs (a bundle from ``ClientKey.encrypt``)
        with `server_key`; returns the encrypted outputs as a bundle.

        The GIL is released while it runs; `progress` shows bootstraps
        done / total, rate and time left (tqdm when installed). Ctrl-C
        stops the run within about a bootstrap per thread and raises
        ``KeyboardInterrupt``; nothing of it is left running. `backend`
        ``"gpu"`` runs on tfhe-rs's CUDA code in a wheel built with the
        ``gpu`` feature; elsewhere it warns (``RuntimeWarning``) and runs
        on the CPU (with ``HEARTH_REQUIRE_GPU`` set it raises instead)."""
    def pack(self, server_key: ServerKey, results: Bundle) -> Bundle:
        """Packs ``results`` (this program's outputs from ``run``) into GLWE
        ciphertexts with ``server_key``'s packing key: what a server sends
        back, a few bytes per digit; ``ClientKey.decrypt`` reads it.
        ``HearthError`` when the outputs are too noisy to pack (said before
        any work)."""

class ClientKey:
    """The secret key: encrypts inputs and decrypts outputs. Never sent
    to a server."""

    @staticmethod
    def generate(params: str) -> ClientKey:
        """A fresh key for the parameter set named `params`."""
    @staticmethod
    def load(path: _Path) -> ClientKey:
        """Reads a key written by ``save``."""
    def save(self, path: _Path) -> None:
        """Writes the key (atomically; keep it private)."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    @property
    def key_id(self) -> str:
        """The key's id (bundles and server keys carry it)."""
    def server_key(self) -> ServerKey:
        """The server key for this key (seconds: bootstrap and
        key-switching keys are generated)."""
    def compressed_server_key(self) -> CompressedServerKey:
        """The server key in seeded form: several times smaller as a
        file, decompressed when loaded."""
    def public_key(self) -> PublicKey:
        """The public key of this key: it encrypts for this key and cannot
        decrypt (hand it to data owners). ``ParamsError`` on a set
        without one (``GATES_128``)."""
    def encrypt(
        self,
        program: CompiledProgram,
        *args: Any,
        only: _Only = None,
        clear: _Only = None,
        **named: Any,
    ) -> Bundle:
        """Encrypts the inputs of `program`: positional arguments in the
        order the inputs were declared, then keyword arguments by input
        name; ints or bools for scalars, array-likes of the declared shape
        for tensors.

        With `only` (a name or a list of names: a run of consecutive
        inputs, in the program's order), just those inputs: one data
        owner's part, which ``Bundle.combine`` joins with the others'.
        With `clear` (a name or a list of names), those inputs travel in
        the clear, each value in its own bytes: public values only, such
        as a transciphered input's sealed bytes and counter (see
        ``aes_ctr``). (An input named ``only``, ``clear`` or ``program`` is
        given by position.)
        ``ShapeError`` for missing, unknown or repeated inputs,
        ``KeyMismatchError`` for a program on another parameter set."""
    def decrypt(self, bundle: Bundle) -> Any:
        """Decrypts a bundle: one value for a one-output bundle, else a
        tuple (ints, bools, numpy arrays for tensors)."""

class PublicKey:
    """Encrypts for one client key and cannot decrypt: what data owners
    hold. Its bundles carry the client key's id and run like that key's
    own (same server key, same programs)."""

    @staticmethod
    def load(path: _Path) -> PublicKey:
        """Reads a key written by ``save``."""
    def save(self, path: _Path) -> None:
        """Writes the key (compressed when it was made here or read so:
        16 KiB on ``DIGITS_128``)."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    @property
    def key_id(self) -> str:
        """The id of the client key it encrypts for."""
    @property
    def compressed(self) -> bool:
        """Whether it is kept as a seed and a body (what its file then
        holds)."""
    def encrypt(
        self,
        program: CompiledProgram,
        *args: Any,
        only: _Only = None,
        clear: _Only = None,
        **named: Any,
    ) -> Bundle:
        """Encrypts inputs of `program` as ``ClientKey.encrypt`` does (the
        same arguments, `only` for one data owner's inputs, `clear` for
        public ones), with the public key."""

class ServerKey:
    """The evaluation key a server runs programs with: bootstrap and
    key-switching keys. Safe to share."""

    @staticmethod
    def load(path: _Path) -> ServerKey:
        """Reads a server key file (full or compressed)."""
    def save(self, path: _Path) -> None:
        """Writes the key in full form."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    @property
    def key_id(self) -> str:
        """The id of the client key it belongs to."""

class CompressedServerKey:
    """A server key in seeded form, several times smaller: what a client
    uploads."""

    @staticmethod
    def load(path: _Path) -> CompressedServerKey:
        """Reads a compressed server key file."""
    def save(self, path: _Path) -> None:
        """Writes the compressed key."""
    def decompress(self) -> ServerKey:
        """The full server key (seconds)."""
    @property
    def params(self) -> str:
        """The parameter set's name."""

class Bundle:
    """Encrypted values in one file: typed, bound to a key id and a
    parameter set. A program's inputs (``ClientKey.encrypt``,
    ``PublicKey.encrypt``, ``Bundle.combine``) or outputs
    (``CompiledProgram.run``)."""

    @staticmethod
    def load(path: _Path) -> Bundle:
        """Reads a bundle file."""
    def save(self, path: _Path) -> None:
        """Writes the bundle."""
    @staticmethod
    def from_bytes(data: bytes) -> Bundle:
        """Reads bundle bytes (``to_bytes``)."""
    @staticmethod
    def combine(bundles: Iterable[Bundle]) -> Bundle:
        """Joins bundles under one key (several data owners' inputs of one
        program) into one, their entries in the order given, which must be
        the program's. ``KeyMismatchError`` for bundles of different keys
        or parameter sets."""
    def to_bytes(self) -> bytes:
        """The bundle as file bytes."""
    @property
    def params(self) -> str:
        """The parameter set's name."""
    @property
    def key_id(self) -> str:
        """The id of the key its values are encrypted under."""
    @property
    def packed(self) -> bool:
        """Whether its values are packed results (``CompiledProgram.pack``, a
        server's download): for their owner to decrypt, not a program's
        input."""
    @property
    def entries(self) -> list[tuple[str, str, list[int]]]:
        """Its values: ``(name, dtype, dims)`` each."""

def dot(x: _Values, y: Any, bias: int = 0) -> Value:
    """``sum(x[i] * y[i]) + bias`` as one fused sum: `x` encrypted, `y`
    encrypted or clear integers."""

def matmul(a: _Values, b: Any, bias: Optional[Any] = None) -> Any:
    """The matrix product ``a @ b (+ bias)``: `a` encrypted ``[m, k]``
    (or a vector), `b` encrypted or clear ``[k, n]`` (or a vector); `bias`
    is clear ``[n]``, with clear `b` only."""

def conv2d(
    x: _Values,
    w: Any,
    bias: Optional[Any] = None,
    stride: int = 1,
    padding: int = 0,
) -> Array:
    """A 2-D convolution (cross-correlation, as in CNNs): `x` is encrypted
    ``[C, H, W]``, `w` clear or encrypted ``[R, C, K, L]``, `bias` clear
    ``[R]``; zero `padding` on every side."""

def relu(x: _Values) -> Array:
    """``max(x, 0)`` elementwise."""

def max_pool(x: _Values, s: int) -> Array:
    """Max over ``s x s`` windows of a ``[C, H, W]`` array."""

def avg_pool(x: _Values, s: int) -> Array:
    """Floor of the mean over ``s x s`` windows (`s` a power of two)."""

class Client:
    """A client of one compute server (``hearth server``).

    ``url`` is ``http://`` or ``https://``; ``token`` the API token the
    server's operator made for you; ``ca_cert`` a PEM file of the
    certificate authority to trust for HTTPS instead of the system's."""

    def __init__(
        self, url: str, token: Optional[str] = None, ca_cert: Optional[_Path] = None
    ) -> None: ...
    @property
    def url(self) -> str:
        """The server's address."""
    def info(self) -> dict[str, Any]:
        """The server's version, limits and backend (``backend``: where jobs run, in words),
        and which server answered (``server``) from which store (``store``: ``files``, or
        ``postgres`` for a fleet of servers)."""
    def upload_key(
        self, key: Union[ServerKey, CompressedServerKey, _Path, bytes]
    ) -> dict[str, Any]:
        """Registers a server key (compressed or not); returns its record
        (``key_id``, ``params``, ``compressed``, ``bytes``, ``new``)."""
    def submit(self, program: CompiledProgram, bundle: Bundle, after: Optional[Job] = None, unpacked: bool = False) -> Job:
        """Submits ``program`` on its encrypted inputs; refusals are raised
        before anything runs. With ``after`` (a finished job), the server
        joins that job's result before the bundle's entries: inputs it
        keeps between jobs, such as AES round keys."""
    def job(self, id: str) -> Job:
        """The job of this id."""

class Job:
    """One job on a compute server, from ``Client.submit``."""

    @property
    def id(self) -> str:
        """The job's id (32 hex digits)."""
    @property
    def pbs(self) -> int:
        """Bootstraps the program runs."""
    @property
    def depth(self) -> int:
        """Its depth in bootstraps."""
    def status(self) -> dict[str, Any]:
        """Where the job is: ``state`` ``"queued"`` (``position``),
        ``"running"`` (``done``, ``total``), ``"done"`` (``result_bytes``)
        or ``"failed"`` (``code``, ``message``)."""
    def wait(
        self, poll: float = 0.2, timeout: Optional[float] = None, progress: bool = True
    ) -> dict[str, Any]:
        """Waits until the job has finished, with a progress display; a
        failed job raises ``JobFailedError``, a timeout ``TimeoutError``."""
    def result(self) -> Bundle:
        """The result bundle (stays on the server until ``delete``)."""
    def delete(self) -> None:
        """Deletes the job and its result on the server."""
