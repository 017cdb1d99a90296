"""The package's surface: stubs match the compiled module, every public
name has a docstring, and the examples run and check themselves."""

import ast
import inspect
import os
import pathlib
import subprocess
import sys

import pytest

import hearth
from hearth import _hearth

ROOT = pathlib.Path(__file__).resolve().parents[3]
STUB = pathlib.Path(hearth.__file__).with_name("_hearth.pyi")


def stub_names():
    """Top-level names of the stub, and each class's public members."""
    tree = ast.parse(STUB.read_text())
    top, members = set(), {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)) and not node.name.startswith("_"):
            top.add(node.name)
        if isinstance(node, ast.ClassDef):
            members[node.name] = {
                n.name for n in node.body if isinstance(n, ast.FunctionDef) and not n.name.startswith("_")
            }
    return top, members


def public(obj):
    return {n for n in dir(obj) if not n.startswith("_")}


def test_stub_matches_the_module():
    top, members = stub_names()
    assert top == public(_hearth), "stub and module differ"
    for cls, names in members.items():
        assert names == public(getattr(_hearth, cls)) - public(Exception), cls


TABLE_START = "    # The operation tables' methods (hearth._ops.stubs); regenerate with\n    # HEARTH_BLESS=1 pytest crates/hearth-py/tests/test_package.py\n"
TABLE_END = "    # End of the operation tables' methods.\n"


def test_the_table_methods_are_stubbed_as_generated():
    """The stubs' part for the operation tables is what the tables
    generate now; ``HEARTH_BLESS=1`` rewrites it."""
    text = STUB.read_text()
    head, rest = text.split(TABLE_START)
    old, tail = rest.split(TABLE_END)
    new = hearth._ops.stubs()
    if os.environ.get("HEARTH_BLESS") and old != new:
        STUB.write_text(head + TABLE_START + new + TABLE_END + tail)
        old = new
    assert old == new, "the stubs' table methods are stale: rerun with HEARTH_BLESS=1"


def test_every_public_name_has_a_docstring():
    for name in hearth.__all__:
        obj = getattr(hearth, name)
        assert inspect.getdoc(obj), name
        if inspect.isclass(obj) and not issubclass(obj, Exception):
            for m in public(obj) - public(object):
                if obj is hearth.Array and hasattr(__import__("numpy").ndarray, m):
                    continue
                assert inspect.getdoc(getattr(obj, m)), f"{name}.{m}"
    assert (pathlib.Path(hearth.__file__).parent / "py.typed").exists()


def example(name, *args):
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "python" / name), *args],
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.parametrize(
    "name, args, expect",
    [
        ("regression.py", ["--rows", "1"], "exact: every prediction equals the integer model"),
        ("digits_cnn.py", ["--images", "0"], "logits match numpy and test_logits.csv"),
        ("client_server.py", [], "client: score 125, approved 1 (Python: 125, 1)"),
    ],
)
def test_examples(name, args, expect):
    r = example(name, *args)
    assert r.returncode == 0, r.stdout + r.stderr
    assert expect in r.stdout


def test_stubs_type_check_the_package_and_examples():
    api = pytest.importorskip("mypy.api")
    paths = [pathlib.Path(hearth.__file__).parent, ROOT / "examples" / "python"]
    out, err, status = api.run([*map(str, paths), "--ignore-missing-imports", "--no-incremental"])
    assert status == 0, out + err
