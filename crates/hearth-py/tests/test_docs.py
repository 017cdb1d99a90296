"""Every Python code block of the README and the book (docs/**/*.md, the
measured output in docs/results/ aside) runs. The blocks of one document
run in order, like a notebook's cells, in one namespace and one temporary
working folder, with the ``hearth`` command on PATH; their asserts check
the results.

Markers (as in crates/hearth-cli/tests/docs.rs): a block preceded by the
line ``<!-- not run by the tests: WHY -->`` is skipped, saying why; a line
starting with ``~`` is hidden by mdBook and runs here without its ``~``.

The tutorial docs/tutorials/regression.md is also a Jupyter notebook,
docs/tutorials/regression.ipynb, made from the page by this file:

    python crates/hearth-py/tests/test_docs.py --write-notebook

and a test checks that the notebook is what the page makes (its code cells
are the page's Python blocks), so the two never drift.
"""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest

from test_server import hearth_command

ROOT = pathlib.Path(__file__).resolve().parents[3]
NOT_RUN = "<!-- not run by the tests:"
FENCE = re.compile(r"^(\s*)```(\S*)")
TUTORIAL = ROOT / "docs" / "tutorials" / "regression.md"
NOTEBOOK = TUTORIAL.with_suffix(".ipynb")


def documents():
    """The README and the book's pages: docs/**/*.md without docs/results/
    beyond the topic pages SUMMARY.md lists, README first."""
    docs = ROOT / "docs"
    summary = (docs / "SUMMARY.md").read_text()
    files = [
        p
        for p in sorted(docs.rglob("*.md"))
        if p.parts[len(docs.parts)] != "results"
        or f"({p.relative_to(docs).as_posix()})" in summary
    ]
    return [ROOT / "README.md"] + files


def parse(path):
    """The page as ("text", lines) and ("block", lang, line, code, why)
    parts in order; ``code`` without the fence's indentation, ``why`` the
    not-run marker's reason or None."""
    lines = path.read_text().split("\n")
    parts, text = [], []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            text.append(lines[i])
            i += 1
            continue
        indent, lang = len(m.group(1)), m.group(2).split(",")[0]
        why = None
        if text and text[-1].strip().startswith(NOT_RUN):
            why = text.pop().strip()[len(NOT_RUN):].removesuffix("-->").strip()
        start = i + 1
        i = start
        while not lines[i].lstrip().startswith("```"):
            i += 1
        code = "\n".join(l[min(indent, len(l) - len(l.lstrip())):] for l in lines[start:i])
        parts.append(("text", text))
        parts.append(("block", lang, start + 1, code, why))
        text = []
        i += 1
    parts.append(("text", text))
    return parts


def runnable(code):
    """The code as it runs: a line starting with ``~`` (after its
    indentation) without the ``~``."""
    return "\n".join(re.sub(r"^(\s*)~", r"\1", line) for line in code.split("\n"))


def python_blocks(path):
    return [p[2:] for p in parse(path) if p[0] == "block" and p[1] == "python"]


DOCS = [(d.relative_to(ROOT), python_blocks(d)) for d in documents()]
DOCS = [(d, b) for d, b in DOCS if b]




def test_the_docs_have_python_blocks():
    assert sum(len(b) for _, b in DOCS) >= 2, DOCS


@pytest.mark.parametrize("path,blocks", DOCS, ids=[str(d) for d, _ in DOCS])
def test_python_blocks_run(path, blocks, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HEARTH_THREADS", os.environ.get("HEARTH_THREADS", "2"))
    monkeypatch.setenv("PATH", f"{hearth_command().parent}{os.pathsep}{os.environ['PATH']}")
    namespace = {"__name__": "__doc_block__"}
    skipped = []
    try:
        for line, code, why in blocks:
            if why is not None:
                assert why, f"{path}:{line}: say why it is not run"
                skipped.append(f"{path}:{line}: {why}")
                continue
            exec(compile(runnable(code), f"{path}:{line}", "exec"), namespace)
    finally:
        # A server a failed page started is stopped with it.
        for v in list(namespace.values()):
            if isinstance(v, subprocess.Popen) and v.poll() is None:
                v.terminate()
                v.wait(timeout=30)
    if len(skipped) == len(blocks):
        pytest.skip("; ".join(skipped))


def notebook(page):
    """The Jupyter notebook of a page: its prose as markdown cells, its
    Python blocks (hidden lines shown) as code cells. Markers and the
    fences of other blocks stay in the markdown."""
    cells = []

    def add(kind, source):
        source = source.strip("\n")
        if not source.strip():
            return
        cell = {
            "cell_type": kind,
            "id": f"cell-{len(cells) + 1}",
            "metadata": {},
            "source": source.splitlines(keepends=True),
        }
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)

    pending = []
    for part in parse(page):
        if part[0] == "text":
            pending += [l for l in part[1] if not l.strip().startswith("<!--")]
        elif part[1] == "python" and part[4] is None:
            add("markdown", "\n".join(pending))
            pending = []
            add("code", runnable(part[3]))
        else:
            pending += [f"```{part[1]}", part[3], "```"]
    add("markdown", "\n".join(pending))
    return {
        "cells": cells,
        "metadata": {
            "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"},
        },
        "nbformat": 4,
        "nbformat_minor": 5,
    }


def notebook_text(page):
    return json.dumps(notebook(page), indent=1, ensure_ascii=False) + "\n"


def test_the_notebook_is_the_tutorial():
    """docs/tutorials/regression.ipynb is made from the page: its code
    cells are the page's Python blocks, in order, and the whole file is
    what `--write-notebook` writes."""
    nb = json.loads(NOTEBOOK.read_text())
    code = ["".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code"]
    page = [runnable(c) for _, c, why in python_blocks(TUTORIAL) if why is None]
    assert code == page, "the notebook's code cells differ from the page's Python blocks"
    assert all(not c.get("outputs") for c in nb["cells"] if c["cell_type"] == "code")
    assert NOTEBOOK.read_text() == notebook_text(TUTORIAL), (
        "regenerate: python crates/hearth-py/tests/test_docs.py --write-notebook"
    )


if __name__ == "__main__":
    if sys.argv[1:] != ["--write-notebook"]:
        sys.exit(f"usage: {sys.argv[0]} --write-notebook")
    NOTEBOOK.write_text(notebook_text(TUTORIAL))
    print(f"wrote {NOTEBOOK.relative_to(ROOT)}")
