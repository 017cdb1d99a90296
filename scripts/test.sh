#!/usr/bin/env bash
# The test command: every Rust test (release), then the Python package's
# tests. The Python side needs only python3 (3.9 or later): it makes a
# virtual environment in .venv, installs maturin, numpy and pytest from
# PyPI into it (and tqdm and mypy, so that both progress displays and the
# type stubs are tested), builds the package there (maturin develop --release) and
# runs pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --release --workspace

python=${PYTHON:-python3}
usable() { "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; }
if ! usable && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq python3 python3-venv >/dev/null || true
fi
if ! usable; then
    echo "Python tests skipped: no $python >= 3.9 with venv (set PYTHON=...)" >&2
    [ -z "${HEARTH_REQUIRE_PYTHON:-}" ] || exit 1
    exit 0
fi
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q "maturin>=1.5,<2" numpy pytest tqdm mypy
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
    maturin develop --release -q -m crates/hearth-py/Cargo.toml
.venv/bin/python -m pytest -q crates/hearth-py/tests
