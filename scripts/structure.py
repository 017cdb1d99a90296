#!/usr/bin/env python3
"""The structure's figures for each crate: lines, its largest file and its
longest function (issue 60's before and after).

Usage: scripts/structure.py [--json]

Counts the Rust sources under each crate's src/ (tests/, benches/ and
examples/ apart). A function runs from its `fn` line to the line of its
closing brace, braces in strings, characters and comments skipped.
"""
import json
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FN = re.compile(r"^\s*(pub(\([^)]*\))?\s+)?((const|async|unsafe|extern\s+\"C\")\s+)*fn\s+(\w+)")


def code_only(line, state):
    """The line without strings, chars and comments; `state` carries a block
    comment or a string across lines."""
    out, i, n = [], 0, len(line)
    while i < n:
        c = line[i]
        if state["block"]:
            if line.startswith("*/", i):
                state["block"] = False
                i += 2
            else:
                i += 1
            continue
        if state["string"]:
            if c == "\\":
                i += 2
            elif c == '"':
                state["string"] = False
                i += 1
            else:
                i += 1
            continue
        if line.startswith("//", i):
            break
        if line.startswith("/*", i):
            state["block"] = True
            i += 2
            continue
        if c == '"':
            state["string"] = True
            i += 1
            continue
        m = re.match(r"'(\\.|[^\\'])'", line[i:])
        if m:
            i += len(m.group(0))
            continue
        out.append(c)
        i += 1
    return "".join(out)


def functions(path):
    """(name, first line, lines) of each function in `path`."""
    lines = path.read_text(errors="replace").splitlines()
    state = {"block": False, "string": False}
    code = [code_only(l, state) for l in lines]
    found = []
    for i, l in enumerate(code):
        m = FN.match(l)
        if not m:
            continue
        depth, opened = 0, False
        for j in range(i, len(code)):
            for c in code[j]:
                if c == "{":
                    depth += 1
                    opened = True
                elif c == "}":
                    depth -= 1
                elif c == ";" and not opened and depth == 0:
                    break
            else:
                if opened and depth == 0:
                    found.append((m.group(5), i + 1, j - i + 1))
                    break
                continue
            break
    return found


def main():
    rows = []
    for crate in sorted((ROOT / "crates").iterdir()):
        src = crate / "src"
        if not src.is_dir():
            continue
        files = sorted(src.rglob("*.rs"))
        if not files:
            continue
        sizes = {f: len(f.read_text(errors="replace").splitlines()) for f in files}
        big = max(sizes, key=sizes.get)
        longest = ("-", None, 0, 0)
        for f in files:
            for name, line, n in functions(f):
                if n > longest[3]:
                    longest = (name, f, line, n)
        rows.append(
            {
                "crate": crate.name,
                "files": len(files),
                "lines": sum(sizes.values()),
                "largest_file": str(big.relative_to(crate)),
                "largest_file_lines": sizes[big],
                "longest_fn": (
                    f"{longest[0]} ({longest[1].relative_to(crate)}:{longest[2]})"
                    if longest[1]
                    else "-"
                ),
                "longest_fn_lines": longest[3],
            }
        )
    if "--json" in sys.argv:
        print(json.dumps(rows, indent=1))
        return
    print("| crate | files | lines | largest file | lines | longest function | lines |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['crate']} | {r['files']} | {r['lines']} | {r['largest_file']} | "
            f"{r['largest_file_lines']} | {r['longest_fn']} | {r['longest_fn_lines']} |"
        )


if __name__ == "__main__":
    main()
