"""Every error path raises its exception class with the Rust message."""

import numpy as np
import pytest

import hearth


def small_program(params="DIGITS_128"):
    p = hearth.Program(params)
    x = p.input("x", "digits4", shape=2)
    p.output("y", x[0] * x[1])
    return p.compile()


def test_insecure_parameters_are_refused():
    for name in ["INSECURE_TEST_DIGITS", "INSECURE_TEST_BITS"]:
        with pytest.raises(hearth.ParamsError, match="INSECURE"):
            hearth.Program(name)
        with pytest.raises(hearth.ParamsError):
            hearth.ClientKey.generate(name)
    with pytest.raises(hearth.ParamsError, match="unknown"):
        hearth.Program("NO_SUCH_SET")
    assert all("INSECURE" not in n for n in hearth.parameter_sets())


def test_type_errors_while_building():
    p = hearth.Program("GATES_128")
    a, b = p.input("a", "u8"), p.input("b", "i8")
    with pytest.raises(TypeError, match="words combine only"):
        a + b
    with pytest.raises(TypeError, match="truth value"):
        if a < a:
            pass
    with pytest.raises(ValueError, match="unknown type"):
        p.input("c", "u7")
    with pytest.raises(ValueError, match="unique"):
        p.input("a", "u8")
    q = hearth.Program("GATES_128")
    c = q.input("c", "u8")
    with pytest.raises(hearth.BuildError, match="two programs"):
        a + c
    d = hearth.Program("DIGITS_128").input("d", "digits4")
    with pytest.raises(TypeError, match="power of two"):
        d // 3
    with pytest.raises(TypeError, match="not defined"):
        d & d


def test_program_after_compile_and_after_error():
    p = hearth.Program("DIGITS_128")
    x = p.input("x", "digits4")
    p.output("y", x + 1)
    p.compile()
    with pytest.raises(hearth.BuildError, match="compiled"):
        x + 1
    q = hearth.Program("GATES_128")
    y = q.input("y", "u8")
    with pytest.raises(hearth.ParamsError):
        y.to_int()
    with pytest.raises(hearth.HearthError, match="earlier error"):
        y + y


def test_shape_and_range_errors():
    prog = small_program()
    with pytest.raises(hearth.ShapeError, match="takes 1 inputs"):
        prog.run_clear([1, 2], 3)
    with pytest.raises(hearth.ShapeError, match="dims"):
        prog.run_clear([1, 2, 3])
    with pytest.raises(hearth.RangeError):
        prog.run_clear([16, 0])
    with pytest.raises(TypeError):
        prog.run_clear(np.array([1.5, 2.0]))


def test_files_damaged_wrong_key(tmp_path, digits_keys):
    key, server = digits_keys
    prog = small_program()
    prog.save(tmp_path / "p.hprog")
    assert hearth.CompiledProgram.load(tmp_path / "p.hprog").stats == prog.stats
    bundle = key.encrypt(prog, [3, -5])
    bundle.save(tmp_path / "in.hbundle")
    data = bytearray((tmp_path / "in.hbundle").read_bytes())
    data[-3] ^= 0x40
    (tmp_path / "bad.hbundle").write_bytes(bytes(data))
    with pytest.raises(hearth.FileError, match="(?i)crc|corrupt"):
        hearth.Bundle.load(tmp_path / "bad.hbundle")
    (tmp_path / "short.hprog").write_bytes((tmp_path / "p.hprog").read_bytes()[:50])
    with pytest.raises(hearth.FileError):
        hearth.CompiledProgram.load(tmp_path / "short.hprog")
    with pytest.raises(hearth.FileError):
        hearth.ServerKey.load(tmp_path / "p.hprog")
    with pytest.raises(hearth.FileError):
        hearth.Bundle.load(tmp_path / "missing")
    other = hearth.ClientKey.generate("DIGITS_128")
    with pytest.raises(hearth.KeyMismatchError):
        other.decrypt(bundle)
    gates = hearth.ClientKey.generate("GATES_128")
    with pytest.raises(hearth.KeyMismatchError):
        gates.encrypt(prog, [1, 2])


def test_damaged_headers_are_file_errors(tmp_path, digits_keys):
    """A flipped bit anywhere in a file's 36-byte header (its parameter set,
    its key id included) is a FileError, never a load or a KeyMismatchError."""
    assert issubclass(hearth.FileTooLargeError, hearth.FileError)
    assert issubclass(hearth.FileTooLargeError, hearth.TooLargeError)
    key, _ = digits_keys
    prog = small_program()
    prog.save(tmp_path / "p.hprog")
    key.encrypt(prog, [3, -5]).save(tmp_path / "in.hbundle")
    for name, load in [("p.hprog", hearth.CompiledProgram.load), ("in.hbundle", hearth.Bundle.load)]:
        good = (tmp_path / name).read_bytes()
        for bit in range(36 * 8):
            data = bytearray(good)
            data[bit // 8] ^= 1 << (bit % 8)
            (tmp_path / "bad").write_bytes(bytes(data))
            with pytest.raises(hearth.FileError):
                load(tmp_path / "bad")
