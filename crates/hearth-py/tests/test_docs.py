"""Every Python code block of the README and the book (docs/*.md) runs,
each in a fresh namespace and a temporary working folder; their asserts
check the results. A block whose first line is `# not run by the tests:
WHY` is skipped, saying why."""

import os
import pathlib
import re

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[3]
NOT_RUN = "# not run by the tests:"


def blocks(lang):
    """(file, line, code) of every ```lang block, README first."""
    files = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))
    found = []
    for path in files:
        lines = path.read_text().split("\n")
        i = 0
        while i < len(lines):
            if re.fullmatch(r"```" + lang + r"\b.*", lines[i]):
                start = i + 1
                i = start
                while not lines[i].startswith("```"):
                    i += 1
                found.append((path.relative_to(ROOT), start + 1, "\n".join(lines[start:i])))
            elif lines[i].startswith("```"):
                i += 1
                while not lines[i].startswith("```"):
                    i += 1
            i += 1
    return found


PYTHON = blocks("python")


def test_the_docs_have_python_blocks():
    assert len(PYTHON) >= 2, PYTHON


@pytest.mark.parametrize("path,line,code", PYTHON, ids=[f"{p}:{n}" for p, n, _ in PYTHON])
def test_python_block_runs(path, line, code, tmp_path, monkeypatch):
    if code.startswith(NOT_RUN):
        pytest.skip(code.split("\n")[0][len(NOT_RUN):].strip())
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HEARTH_THREADS", os.environ.get("HEARTH_THREADS", "2"))
    exec(compile(code, f"{path}:{line}", "exec"), {"__name__": "__doc_block__"})
