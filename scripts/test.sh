#!/usr/bin/env bash
# The test command: every Rust test (release), the MPI backend's tests on
# 1, 2 and 4 ranks, the Python package's tests, then the benchmarks'
# tests. The Python side needs only python3 (3.9 or later): it makes a
# virtual environment in .venv, installs maturin, numpy and pytest from
# PyPI into it (and tqdm and mypy, so that both progress displays and the
# type stubs are tested), builds the package there (maturin develop
# --release) and runs pytest.
#
# tfhe compiles twice in all: once with core_crypto alone, shared by the
# demo, the library's and the command's tests, the MPI tests and the Python
# package (the workspace-hack crate, crates/hearth-hack, makes every one of
# these builds ask for the same features); once with tfhe-rs's integer API
# for hearth-bench, last.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo test --release --workspace --exclude hearth-bench

# The MPI backend (feature `mpi`) on 1, 2 and 4 ranks of this machine. It
# needs Open MPI and libclang: installed with apt-get where missing (Debian),
# elsewhere skipped, saying so, unless HEARTH_REQUIRE_MPI is set.
mpi_tools() { command -v mpirun >/dev/null && command -v mpicc >/dev/null && ldconfig -p 2>/dev/null | grep -q libclang; }
if ! mpi_tools && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq libopenmpi-dev openmpi-bin libclang-dev >/dev/null || true
fi
if mpi_tools; then
    # What Open MPI needs as root in a container (no cross-memory attach).
    export OMPI_MCA_btl_vader_single_copy_mechanism=none
    HEARTH_REQUIRE_MPI=1 cargo test --release -p hearth --features mpi --test mpi
else
    echo "MPI tests skipped: no mpirun, mpicc or libclang (Debian: libopenmpi-dev openmpi-bin libclang-dev)" >&2
    [ -z "${HEARTH_REQUIRE_MPI:-}" ] || exit 1
fi

python=${PYTHON:-python3}
usable() { "$python" -c 'import sys, venv, ensurepip; sys.exit(sys.version_info < (3, 9))' 2>/dev/null; }
if ! usable && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq python3 python3-venv >/dev/null || true
fi
if usable; then
    if [ ! -x .venv/bin/python ]; then
        "$python" -m venv .venv
    fi
    .venv/bin/python -m pip install -q --upgrade pip
    .venv/bin/python -m pip install -q "maturin>=1.5,<2" numpy pytest tqdm mypy
    VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
        maturin develop --release -q -m crates/hearth-py/Cargo.toml
    .venv/bin/python -m pytest -q crates/hearth-py/tests
else
    echo "Python tests skipped: no $python >= 3.9 with venv (set PYTHON=...)" >&2
    [ -z "${HEARTH_REQUIRE_PYTHON:-}" ] || exit 1
fi

# The benchmarks (their own tfhe build, with tfhe-rs's integer API).
cargo test --release -p hearth-bench
