#!/usr/bin/env bash
# Python's overhead on an encrypted run (crates/hearth-py/bench/overhead.py):
#   scripts/bench-python.sh [RUNS] [THREADS]
# Needs the .venv that scripts/test.sh makes (the package built into it).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -q -p hearth --example word_program
VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
    maturin develop --release -q -m crates/hearth-py/Cargo.toml
.venv/bin/python crates/hearth-py/bench/overhead.py target/release/examples/word_program \
    --runs "${1:-5}" --threads "${2:-2}"
