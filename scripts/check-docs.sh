#!/usr/bin/env bash
# The published documentation's checks (CI runs them after scripts/test.sh,
# which made .venv with the Python package and built target/release/hearth).
#
#   scripts/check-docs.sh [STEP...]      (no STEP: all of them, in this order)
#
#   build      rustdoc (cargo doc, as CI runs it), the book (mdbook build docs)
#              and the Python API reference (pdoc, from the docstrings and the
#              .pyi stubs) side by side in target/doc: hearth/, book/, python/
#              (and checks that the Python reference's relative links lead
#              to files, and that it and rustdoc link the book)
#   linkcheck  every relative link and anchor of the built book resolves,
#              into rustdoc and the Python reference too: LinkChecker with
#              its anchor check; http(s) links are not checked (CI depends
#              on no other site)
#   reach      every .md under docs/ is in docs/SUMMARY.md or pulled in by
#              {{#include ...}} from a page that is (recursively)
#   markers    no code block of README.md or docs/ starts with the old
#              "# not run by the tests" line, and the README's blocks have
#              no hidden lines (`~` in sh/python, `# ` in rust)
#   hello      the README's hello worlds, pasted into fresh projects: a new
#              crate (`cargo new`, the README's dependency line) and a fresh
#              virtual environment with the wheel; each prints the README's
#              expected output (slow: compiles tfhe in its own target dir)
#   notebooks  every docs/**/*.ipynb runs without error in that fresh
#              environment, with target/release (the `hearth` command) on PATH
#
#   links      = build linkcheck reach markers (fast: run it often)
#   all        = every step (the default)
#
# Every step runs even when one before it failed; the script fails at the
# end if any did, naming them.
#
# Environment: DOCS_SRC (the book's sources, default docs), DOC_OUT (where
# book/ and python/ are written, default target/doc; rustdoc is always
# target/doc), SKIP_CARGO_DOC=1 (use the rustdoc already in target/doc),
# HELLO_TARGET_DIR (the hello world crate's target dir, default
# target/hello-world), PYTHON (the interpreter of the fresh environment,
# default python3).
#
# What the hello step reads in README.md, in this order:
#   * a ```toml block with the line `hearth = { path = "..." }` (the path is
#     rewritten to this checkout's crates/hearth);
#   * a heading with "Hello" in it; after it, the first ```rust block (a
#     whole src/main.rs) and the fenced block right after it, a ```text
#     block: its stdout;
#   * after the heading too, the first ```python block (a whole script) and
#     the fenced block right after it, a ```text block: its stdout.
# HTML comments and prose may stand between the blocks.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

DOCS_SRC=${DOCS_SRC:-docs}
DOC_OUT=${DOC_OUT:-target/doc}
mkdir -p "$DOC_OUT"
DOC_OUT=$(cd "$DOC_OUT" && pwd)
HELLO_TARGET_DIR=${HELLO_TARGET_DIR:-$root/target/hello-world}
PYTHON=${PYTHON:-python3}
venv_py=$root/.venv/bin/python

steps=()
for a in "${@:-all}"; do
    case "$a" in
        all) steps+=(build linkcheck reach markers hello notebooks) ;;
        links) steps+=(build linkcheck reach markers) ;;
        build | linkcheck | reach | markers | hello | notebooks) steps+=("$a") ;;
        -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "check-docs: unknown step '$a' (see --help)" >&2; exit 2 ;;
    esac
done

work=$(mktemp -d)
cleanup() { rm -rf "$work"; }
trap cleanup EXIT

failed=()
fail() { echo "check-docs: $*" >&2; }
section() { printf '\n== check-docs: %s ==\n' "$*"; }

# pip installs of the tools, into .venv (made by scripts/test.sh).
venv_tools() {
    if [ ! -x "$venv_py" ]; then
        fail ".venv is missing: run scripts/test.sh first (it makes .venv with the Python package)"
        return 1
    fi
    local need=()
    "$venv_py" -c 'import pdoc' 2>/dev/null || need+=("pdoc>=16,<17")
    "$venv_py" -c 'import linkcheck' 2>/dev/null || need+=("linkchecker>=10.5,<11")
    if [ ${#need[@]} -gt 0 ]; then "$venv_py" -m pip install -q "${need[@]}"; fi
}

# ---------------------------------------------------------------------------
step_build() {
    section "build: rustdoc, the book and the Python API reference in $DOC_OUT"
    if [ "${SKIP_CARGO_DOC:-}" != 1 ]; then
        # The same command and flags as .ci/run: there, nothing is redone.
        RUSTDOCFLAGS="${RUSTDOCFLAGS--D warnings}" cargo doc --workspace --exclude hearth-mpi --no-deps
    fi
    test -s target/doc/hearth/index.html || { fail "no rustdoc in target/doc/hearth"; return 1; }
    if [ "$DOC_OUT" != "$root/target/doc" ]; then
        # Rustdoc beside a book built elsewhere (a scratch copy).
        for d in "$root"/target/doc/*/; do
            n=$(basename "$d")
            case "$n" in book | python) ;; *) rm -rf "${DOC_OUT:?}/$n"; cp -r "$d" "$DOC_OUT/$n" ;; esac
        done
        cp "$root"/target/doc/*.js "$root"/target/doc/*.html "$DOC_OUT"/ 2>/dev/null || true
    fi
    command -v mdbook >/dev/null || cargo install -q mdbook --locked --version "^0.4"
    mdbook build "$DOCS_SRC" -d "$DOC_OUT/book"
    test -s "$DOC_OUT/book/index.html"

    venv_tools
    rm -rf "$DOC_OUT/python"
    # pdoc documents the package `hearth`; its classes and functions come
    # from the native module hearth._hearth, whose signatures and types are
    # in _hearth.pyi. pdoc reads a stub only for the module it documents
    # (hearth/__init__.pyi would be hearth's), so the members that hearth
    # re-exports from _hearth get their signatures from _hearth.pyi here,
    # with pdoc's own stub reader.
    (cd "$work" && "$venv_py" - "$DOC_OUT/python") <<'PY'
import sys
from pathlib import Path
from unittest import mock

import pdoc
import pdoc.doc
import pdoc.doc_pyi as pyi
import pdoc.render

out = Path(sys.argv[1])
pdoc.render.configure(docformat="restructuredtext", footer_text="hearth: the Python API")
module = pdoc.doc.Module.from_name("hearth")
stub_file = pyi.find_stub_file("hearth._hearth")
if stub_file is None:
    sys.exit("pdoc: no hearth/_hearth.pyi on sys.path")
stub = pyi._import_stub_file("hearth._hearth", stub_file)
pyi._prepare_module(module)
stub_module = pdoc.doc.Module(stub)
patched = []
# While the stub stands for the native module, the stub's annotations
# (Optional, Any, its aliases) resolve: patch and render then.
with mock.patch.dict(sys.modules, {"hearth._hearth": stub}):
    for member in module.members.values():
        in_stub = stub_module.get(member.qualname)
        if in_stub is not None and in_stub.taken_from[0] == "hearth._hearth":
            pyi._patch_doc(member, stub_module)
            patched.append(member.qualname)
    generate = module.get("ClientKey.generate")
    if generate is None or "str" not in str(generate.signature):
        sys.exit(f"pdoc: ClientKey.generate has no signature from the stub: {generate and generate.signature}")
    pdoc.pdoc("hearth", output_directory=out)
print(f"pdoc: {out}/hearth.html, {len(patched)} names of hearth with their signatures from {stub_file.name}")
PY
    test -s "$DOC_OUT/python/hearth.html"
    # The relative links the docstrings make (pdoc's own are sure) lead to
    # files: the Python reference is checked here, not followed below.
    "$PYTHON" - "$DOC_OUT/python" <<'PY'
import os
import re
import sys

d = sys.argv[1]
for page in sorted(f for f in os.listdir(d) if f.endswith(".html")):
    text = open(os.path.join(d, page), encoding="utf-8").read()
    for href in sorted(set(re.findall(r'href="([^"#:]+)(?:#[^"]*)?"', text))):
        if not os.path.exists(os.path.join(d, href)):
            sys.exit(f"DEAD python/{page}: {href} -- no such file")
PY
    # Linked both ways: the API docs lead to the book (which links both).
    grep -q 'href="../book/index.html"' "$DOC_OUT/python/hearth.html" ||
        { fail "the Python reference (hearth's module docstring) does not link ../book/index.html"; return 1; }
    grep -q 'href="../book/index.html"' target/doc/hearth/index.html ||
        { fail "rustdoc's crate docs (crates/hearth/src/lib.rs) do not link ../book/index.html"; return 1; }
    echo "built: $DOC_OUT/{hearth,book,python}"
}

# ---------------------------------------------------------------------------
step_linkcheck() {
    section "linkcheck: relative links and anchors of the built book"
    test -s "$DOC_OUT/book/index.html" || { fail "no built book in $DOC_OUT/book: run the build step"; return 1; }
    venv_tools
    # A snapshot that anyone can read: LinkChecker run as root drops to the
    # user nobody, and a concurrent `mdbook build` cannot change it midway.
    local stage=$work/stage
    mkdir -p "$stage/doc"
    cp -r "$root"/target/doc/. "$stage/doc/"
    rm -rf "$stage/doc/book" "$stage/doc/python"
    cp -r "$DOC_OUT/book" "$DOC_OUT/python" "$stage/doc/"
    chmod 755 "$work"
    chmod -R a+rX "$stage"
    cat >"$stage/linkcheckerrc" <<'EOF'
[checking]
threads=2
[filtering]
checkextern=0
[AnchorCheck]
EOF
    # Followed: the book. Checked (the files and their anchors) but not
    # followed: rustdoc (-D warnings checks its own links) and the Python
    # reference (pdoc's links; the build step checks its links out). The
    # report lists every URL (--verbose), the dead ones are counted below.
    # print.html repeats every page with in-page anchors: the pages are
    # checked instead.
    local rc=0
    "$root/.venv/bin/linkchecker" -f "$stage/linkcheckerrc" --no-status --verbose -o csv \
        --ignore-url='^(https?|mailto|ftp):' \
        --ignore-url='/doc/book/print\.html' \
        --no-follow-url='/doc/(?!book/)' \
        "file://$stage/doc/book/index.html" \
        >"$work/links.csv" 2>"$work/links.err" || rc=$?
    "$PYTHON" - "$work/links.csv" "$stage/doc/" "$DOCS_SRC" <<'PY' || rc=1
import csv
import os
import sys

path, prefix, src = sys.argv[1], "file://" + sys.argv[2], sys.argv[3]
rows = [r for r in csv.reader(
    (l for l in open(path, encoding="utf-8") if l.strip() and not l.startswith("#")), delimiter=";")]
if not rows or rows[0][:2] != ["urlname", "parentname"]:
    sys.exit("linkcheck: LinkChecker wrote no report")
head, rows = rows[0], rows[1:]
col = {n: i for i, n in enumerate(head)}
problems = []
for r in rows:
    if len(r) < len(head):
        continue
    valid, result, warning = r[col["valid"]] == "True", r[col["result"]], r[col["warningstring"]]
    if valid and not warning:
        continue
    parent = r[col["parentname"]].replace(prefix, "")
    page = parent
    if parent.startswith("book/") and parent.endswith(".html"):
        md = os.path.join(src, parent[5:-5] + ".md")
        if os.path.exists(md):
            page = f"{md} ({parent})"
    if not valid:
        why = result.replace(prefix, "")
        if "No such file" in why:
            why = "no such file"
    else:
        why = warning.split(" Available anchors")[0].replace("\n", " ")
    problems.append((page, int(r[col["line"]] or 0), r[col["urlname"]], why))
for page, line, url, why in sorted(problems):
    print(f"DEAD {page}:{line}: {url} -- {why}")
checked = len(rows)
print(f"linkcheck: {len(problems)} dead of {checked} links checked")
sys.exit(1 if problems else 0)
PY
    if [ "$rc" != 0 ]; then
        grep -v -e 'dropping privileges' -e 'Checking intern URLs only' "$work/links.err" >&2 || true
        return 1
    fi
}

# ---------------------------------------------------------------------------
step_reach() {
    section "reach: every .md under $DOCS_SRC is in SUMMARY.md or included from a page that is"
    "$PYTHON" - "$DOCS_SRC" <<'PY'
import os
import re
import sys

src = os.path.realpath(sys.argv[1])
summary = os.path.join(src, "SUMMARY.md")
text = re.sub(r"<!--.*?-->", "", open(summary, encoding="utf-8").read(), flags=re.S)
listed = [os.path.normpath(os.path.join(src, m)) for m in re.findall(r"\]\(([^)#\s]+\.md)(?:#[^)]*)?\)", text)]
include = re.compile(r"\{\{#(?:include|rustdoc_include|playground)\s+([^}\s:]+)[^}]*\}\}")
seen, todo = set(), list(listed)
while todo:
    f = todo.pop()
    if f in seen or not os.path.isfile(f):
        continue
    seen.add(f)
    for inc in include.findall(open(f, encoding="utf-8", errors="replace").read()):
        todo.append(os.path.normpath(os.path.join(os.path.dirname(f), inc)))
missing = [m for m in listed if not os.path.isfile(m)]
every = sorted(os.path.join(d, n) for d, _, fs in os.walk(src) for n in fs if n.endswith(".md"))
unreachable = [f for f in every if f != summary and f not in seen]
def show(f):
    rel = os.path.relpath(f)
    return f if rel.startswith("..") else rel


for f in missing:
    print(f"MISSING {show(f)}: listed in SUMMARY.md, no such file")
for f in unreachable:
    print(f"UNREACHABLE {show(f)}")
print(f"reach: {len(every) - 1 - len(unreachable)} of {len(every) - 1} pages reachable")
sys.exit(1 if unreachable or missing else 0)
PY
}

# ---------------------------------------------------------------------------
step_markers() {
    section "markers: no test marker or hidden line shown to readers"
    "$PYTHON" - README.md "$DOCS_SRC" <<'PY'
import os
import re
import sys

readme, src = sys.argv[1], sys.argv[2]
files = [readme] + sorted(os.path.join(d, n) for d, _, fs in os.walk(src) for n in fs if n.endswith(".md"))
fence = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([\w+-]*)")
bad = []
for f in files:
    lines = open(f, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = fence.match(lines[i])
        if not m:
            i += 1
            continue
        start, mark, lang = i, m.group(2), m.group(3).lower()
        body = []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(mark):
            body.append(lines[i])
            i += 1
        i += 1
        if body and body[0].lstrip().startswith("# not run by the tests"):
            bad.append(f"{f}:{start + 2}: the old marker '# not run by the tests' in the block "
                       "(an HTML comment before the fence instead)")
        if f == readme:
            # GitHub shows every line: the README's blocks run as pasted.
            for k, line in enumerate(body):
                hidden = (lang in ("sh", "bash", "console", "python") and line.startswith("~")) or \
                         (lang == "rust" and re.match(r"^\s*#(\s|$)", line))
                if hidden:
                    bad.append(f"{f}:{start + 2 + k}: a hidden line in the README's {lang} block: {line!r}")
for b in bad:
    print("MARKER " + b)
print(f"markers: {len(bad)} found in {len(files)} files")
sys.exit(1 if bad else 0)
PY
}

# ---------------------------------------------------------------------------
# The README's blocks, as the hello step reads them (see the top).
readme_blocks() {
    "$PYTHON" - README.md "$1" "$root/crates/hearth" <<'PY'
import os
import re
import sys

readme, out, crate = sys.argv[1:4]
lines = open(readme, encoding="utf-8").read().split("\n")
fence = re.compile(r"^(`{3,}|~{3,})\s*([\w+-]*)")
blocks, heading, i = [], None, 0   # (line, lang, text, after the hello heading)
while i < len(lines):
    if re.match(r"^#{1,6}\s.*hello", lines[i], re.I) and heading is None:
        heading = i
    m = fence.match(lines[i])
    if not m:
        i += 1
        continue
    start, mark, lang = i, m.group(1), m.group(2).lower()
    body = []
    i += 1
    while i < len(lines) and not lines[i].startswith(mark):
        body.append(lines[i])
        i += 1
    i += 1
    blocks.append((start + 1, lang, "\n".join(body) + "\n", heading is not None))


def fail(msg):
    sys.exit(f"hello: README.md: {msg}")


deps = [l for _, lang, t, _ in blocks if lang == "toml" for l in t.split("\n")
        if re.match(r'^\s*hearth\s*=\s*\{.*\bpath\s*=\s*"[^"]*"', l)]
if not deps:
    fail('no ```toml block with a line `hearth = { path = "..." }`')
dep = re.sub(r'\bpath\s*=\s*"[^"]*"', f'path = "{crate}"', deps[0].strip())
open(os.path.join(out, "dependency.toml"), "w").write(dep + "\n")
if heading is None:
    fail("no heading with 'Hello' in it")
for lang, name in (("rust", "main.rs"), ("python", "hello.py")):
    k = next((k for k, b in enumerate(blocks) if b[3] and b[1] == lang), None)
    if k is None:
        fail(f"no ```{lang} block after the Hello heading")
    if k + 1 >= len(blocks) or blocks[k + 1][1] != "text":
        fail(f"the ```{lang} block at line {blocks[k][0]} is not followed by a ```text block (its output)")
    open(os.path.join(out, name), "w").write(blocks[k][2])
    open(os.path.join(out, name + ".expected"), "w").write(blocks[k + 1][2])
    print(f"hello: README.md line {blocks[k][0]}: ```{lang}, its output at line {blocks[k + 1][0]}")
print(f"hello: the dependency line: {dep}")
PY
}

same_output() { # expected actual what: the same lines, but for trailing spaces and blank lines
    "$PYTHON" - "$@" <<'PY'
import difflib
import sys

expected, actual, what = sys.argv[1:4]
def lines(p):
    return [l.rstrip() for l in open(p, encoding="utf-8").read().rstrip().split("\n")]
e, a = lines(expected), lines(actual)
if e != a:
    sys.stdout.writelines(l + "\n" for l in difflib.unified_diff(e, a, "README.md (expected)", what, lineterm=""))
    sys.exit(f"hello: {what} did not print the README's expected output")
print(f"hello: {what} printed the README's expected output")
PY
}

# The fresh environment, made once for the hello and notebooks steps (each
# step runs in a subshell: the marker file carries it from one to the next).
fresh_venv=$work/venv
make_fresh_venv() {
    [ -e "$fresh_venv/.ready" ] && return 0
    # The wheel a user builds: maturin, release, the package's default
    # features; installed with numpy in a new virtual environment.
    section "the wheel of crates/hearth-py and a fresh virtual environment"
    local maturin=$root/.venv/bin/maturin
    [ -x "$maturin" ] || maturin=maturin
    rm -rf "$work/wheels" "$fresh_venv"
    # (Called from an `if`, where -e does not apply: each command checked.)
    "$maturin" build --release -m crates/hearth-py/Cargo.toml --out "$work/wheels" || return 1
    local wheel
    wheel=$(ls "$work"/wheels/*.whl) || return 1
    "$PYTHON" -m venv "$fresh_venv" || return 1
    "$fresh_venv/bin/python" -m pip install -q --upgrade pip || return 1
    "$fresh_venv/bin/python" -m pip install -q "$wheel" numpy || return 1
    touch "$fresh_venv/.ready"
    echo "fresh environment: $fresh_venv with $(basename "$wheel")"
}

step_hello() {
    section "hello: the README's hello worlds in fresh projects"
    local h=$work/hello rc=0
    mkdir -p "$h"
    readme_blocks "$h" || return 1

    # Rust: a new crate, the README's dependency line, its block as main.rs.
    (cd "$h" && cargo new -q --vcs none --bin hello-hearth)
    local crate=$h/hello-hearth
    # `cargo new` ends Cargo.toml with an empty [dependencies] table.
    grep -q '^\[dependencies\]' "$crate/Cargo.toml" || printf '\n[dependencies]\n' >>"$crate/Cargo.toml"
    cat "$h/dependency.toml" >>"$crate/Cargo.toml"
    cp "$h/main.rs" "$crate/src/main.rs"
    # The checkout's lock: the same versions as the tests (cargo drops what
    # the crate does not use).
    cp Cargo.lock "$crate/Cargo.lock"
    echo "hello: cargo run --release in a new crate (target dir $HELLO_TARGET_DIR)"
    if (cd "$crate" && CARGO_TARGET_DIR=$HELLO_TARGET_DIR cargo run --release) >"$h/rust.out"; then
        same_output "$h/main.rs.expected" "$h/rust.out" "the README's Rust hello world" || rc=1
    else
        fail "the README's Rust hello world did not build or run in a new crate"
        rc=1
    fi

    # Python: the README's block as a file, run in the fresh environment
    # from a folder outside the checkout.
    if make_fresh_venv; then
        mkdir -p "$h/py"
        cp "$h/hello.py" "$h/py/hello.py"
        if (cd "$h/py" && env -u PYTHONPATH "$fresh_venv/bin/python" hello.py) >"$h/python.out"; then
            same_output "$h/hello.py.expected" "$h/python.out" "the README's Python hello world" || rc=1
        else
            fail "the README's Python hello world failed in a fresh environment"
            rc=1
        fi
    else
        fail "building or installing the wheel failed"
        rc=1
    fi
    return $rc
}

# ---------------------------------------------------------------------------
step_notebooks() {
    section "notebooks: every .ipynb under $DOCS_SRC, executed"
    local nbs=()
    while IFS= read -r f; do nbs+=("$f"); done < <(find "$DOCS_SRC" -name '*.ipynb' -not -path '*/.ipynb_checkpoints/*' | sort)
    if [ ${#nbs[@]} = 0 ]; then
        echo "notebooks: none"
        return 0
    fi
    test -x target/release/hearth || { fail "no target/release/hearth (scripts/test.sh builds it)"; return 1; }
    make_fresh_venv || { fail "building or installing the wheel failed"; return 1; }
    "$fresh_venv/bin/python" -m pip install -q nbclient nbformat ipykernel
    local rc=0 nb
    for nb in "${nbs[@]}"; do
        local cwd
        cwd=$(mktemp -d -p "$work")
        if env -u PYTHONPATH PATH="$root/target/release:$PATH" \
            "$fresh_venv/bin/python" - "$nb" "$cwd" <<'PY'; then
import sys
import time

import nbformat
from nbclient import NotebookClient

path, cwd = sys.argv[1], sys.argv[2]
nb = nbformat.read(path, as_version=4)
start = time.time()
# The kernel is the fresh environment's python (ipykernel installed there);
# a cell that raises stops the run with its traceback.
NotebookClient(nb, timeout=1800, kernel_name="python3", resources={"metadata": {"path": cwd}}).execute()
cells = sum(1 for c in nb.cells if c.cell_type == "code")
print(f"notebooks: {path}: {cells} code cells ran without error ({time.time() - start:.0f} s)")
PY
            :
        else
            fail "$nb failed"
            rc=1
        fi
    done
    return $rc
}

# Each step in a subshell with -e in force (it would not be in an `if`).
for s in "${steps[@]}"; do
    set +e
    (
        set -euo pipefail
        "step_$s"
    )
    rc=$?
    set -e
    if [ "$rc" != 0 ]; then
        failed+=("$s")
        echo "check-docs: step '$s' FAILED" >&2
    fi
done
echo
if [ ${#failed[@]} -gt 0 ]; then
    echo "check-docs: FAILED: ${failed[*]} (of: ${steps[*]})" >&2
    exit 1
fi
echo "check-docs: passed: ${steps[*]}"
