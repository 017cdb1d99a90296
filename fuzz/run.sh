#!/usr/bin/env bash
# Runs one fuzz target with the limits of README.md:
#   fuzz/run.sh TARGET [RUNS] [extra libFuzzer flags...]
# New inputs go to fuzz/corpus/TARGET (ignored by git); the committed seeds
# in fuzz/seeds/TARGET are read, never written; crashes go to
# fuzz/artifacts/TARGET.
set -euo pipefail
cd "$(dirname "$0")/.."
target="$1"
runs="${2:-1000000}"
shift $(( $# < 2 ? $# : 2 ))
mkdir -p "fuzz/corpus/$target"
exec cargo +nightly fuzz run -O -a -s none --codegen-units 16 "$target" \
    "fuzz/corpus/$target" "fuzz/seeds/$target" -- \
    -runs="$runs" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=2048 \
    -print_final_stats=1 "$@"
