#!/usr/bin/env bash
# The test command: every Rust test (release) with the MPI backend's tests
# on 1, 2 and 4 ranks, the fleet's on a throwaway PostgreSQL cluster and
# the benchmarks' tests among them, then the Python package's tests. The Python side needs only python3 (3.9 or later): it
# makes a virtual environment in .venv, installs maturin, numpy and pytest
# from PyPI into it (and tqdm and mypy, so that both progress displays and
# the type stubs are tested) while cargo builds, then builds the package
# there (maturin develop --release) and runs pytest on two workers
# (pytest-xdist: most Python tests use one core), all while the Rust tests
# run. The browser client's test (crates/hearth-py/tests/test_browser.py)
# runs with them where its tools are there (Chromium, chromedriver and the
# `wasm-bindgen` command of the locked version): scripts/wasm-build.sh
# builds the page before pytest starts. Where they are missing, the test
# skips, saying so, unless HEARTH_REQUIRE_BROWSER is set: then Debian's
# chromium and chromium-driver are installed, and wasm-build.sh installs
# wasm-bindgen (a 2-minute compile, kept out of a fresh machine's test
# run). CI sets it (.ci/run).
#
# One build serves all three: `tfhe` and the library compile once. The
# workspace-hack crate (crates/hearth-hack) makes every build ask for the
# same features of the shared dependencies; the library is built with the
# same features everywhere (`testing` and, where Open MPI is installed,
# `mpi`: the Python package is built with them too, though it uses neither);
# and hearth-bench is built without its comparisons with tfhe-rs
# (`--no-default-features`), which would need a build of tfhe of their
# own. CI runs those comparisons (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# The MPI backend (feature `mpi`) needs Open MPI and libclang: installed
# with apt-get where missing (Debian), elsewhere its tests are skipped,
# saying so, unless HEARTH_REQUIRE_MPI is set.
mpi_tools() { command -v mpirun >/dev/null && command -v mpicc >/dev/null && ldconfig -p 2>/dev/null | grep -q libclang; }
# The fleet's tests (`hearth server --store postgres://`) start a throwaway
# PostgreSQL cluster: Debian's postgresql is installed where it is missing,
# as Open MPI is; elsewhere they skip, saying so, unless
# HEARTH_REQUIRE_POSTGRES is set.
pg_tools() { { command -v initdb >/dev/null || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; } && command -v psql >/dev/null; }
missing=()
if ! mpi_tools; then missing+=(libopenmpi-dev openmpi-bin libclang-dev); fi
if ! pg_tools; then missing+=(postgresql); fi
if [ ${#missing[@]} -gt 0 ] && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null || true
fi
if pg_tools; then
    export HEARTH_REQUIRE_POSTGRES=1
else
    echo "fleet tests skipped: no PostgreSQL (initdb, psql; Debian: postgresql)" >&2
    [ -z "${HEARTH_REQUIRE_POSTGRES:-}" ] || exit 1
fi
# The browser test's tools: Chromium and chromedriver (installed where
# missing when the test is required), and the wasm-bindgen command the page
# is built with (scripts/wasm-build.sh installs it when the test is
# required). Without them the test skips, saying so.
browser_tools() { { command -v chromium || command -v chromium-browser; } >/dev/null && command -v chromedriver >/dev/null; }
if [ -n "${HEARTH_REQUIRE_BROWSER:-}" ] && ! browser_tools && command -v apt-get >/dev/null; then
    SUDO=""
    if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq chromium chromium-driver >/dev/null || true
fi
wasm_bindgen_version=$(awk '/^name = "wasm-bindgen"$/ { getline; gsub(/[^0-9.]/, ""); print }' Cargo.lock)
bindgen_is() { [ "$("$1" --version 2>/dev/null | cut -d' ' -f2)" = "$wasm_bindgen_version" ]; }
page_tools() { browser_tools && { bindgen_is wasm-bindgen || bindgen_is target/tools/bin/wasm-bindgen; }; }

features=hearth/testing
# The Python package's: the library's only (it has the server's client,
# not the server).
py_features=$features
if mpi_tools; then
    # The library's MPI backend and the server's (`hearth server --backend
    # mpi`, whose 2-rank test is among the CLI's).
    features=$features,hearth/mpi,hearth-server/mpi
    py_features=$py_features,hearth/mpi
    # The MPI tests must run, not skip. What Open MPI needs as root in a
    # container: no cross-memory attach.
    export HEARTH_REQUIRE_MPI=1 OMPI_MCA_btl_vader_single_copy_mechanism=none
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
# The Python tools download and install in the background while cargo
# builds (the network, not the two cores, is their limit).
pip_log=$(mktemp)
trap 'rm -f "$pip_log"' EXIT
pip_pid=""
if usable; then
    (
        if [ ! -x .venv/bin/python ]; then "$python" -m venv .venv; fi
        .venv/bin/python -m pip install -q --upgrade pip
        .venv/bin/python -m pip install -q "maturin>=1.5,<2" numpy pytest pytest-xdist tqdm mypy "selenium>=4.10,<5"
    ) >"$pip_log" 2>&1 &
    pip_pid=$!
fi

# Every crate's tests in one build, hearth-bench's without its comparisons
# with tfhe-rs (`--no-default-features`: only hearth-bench has default
# features). hearth-py has no Rust tests: maturin builds it below.
# Without Open MPI, the crate hearth-mpi (the MPI backend) is left out.
cli_features=$features
exclude=(--exclude hearth-py)
if mpi_tools; then
    cli_features=$features,hearth-cli/mpi,hearth-bench/mpi
else
    exclude+=(--exclude hearth-mpi)
fi
cargo_test=(cargo test --release --workspace "${exclude[@]}" --no-default-features --features "$cli_features")
"${cargo_test[@]}" --no-run
# When each part ended, in seconds from the start, shown at the end: on
# 2 cores the parts share the CPU, and the last to end is the one to trim.
ends=$(mktemp)
echo "build $SECONDS" >>"$ends"
# Runs a part's command, then notes when it ended; its status is the command's.
part() {
    local name=$1 status=0
    shift
    "$@" || status=$?
    echo "$name $SECONDS" >>"$ends"
    return "$status"
}
# The tests run in two streams at once, from that one build (the same
# features for every shared crate, so neither rebuilds): the command's,
# the server's and the benchmarks', which wait much of their time on
# servers, ranks, leases and timeouts, beside the library's and the
# rest, which compute. Their output is shown after the first stream's.
rest=(cargo test --release --workspace "${exclude[@]}" --exclude hearth-cli --exclude hearth-server
    --exclude hearth-bench --no-default-features --features "$features")
servers=(cargo test --release -p hearth-cli -p hearth-server -p hearth-bench --no-default-features
    --features "$cli_features")

# The Python package builds, and its tests then run, while the Rust tests
# run: those leave a core idle at times (servers, ranks and timeouts waited
# for). Cargo holds its lock on target/ only while it checks that the tests
# are built, so the tests start first; maturin's build (reusing the library
# just built, same features) then takes the lock. pytest's output is shown
# after the Rust tests'.
maturin_log=$(mktemp)
wasm_log=$(mktemp)
pytest_log=$(mktemp)
servers_log=$(mktemp)
tests_pid=""
servers_pid=""
pytest_pid=""
# What runs in the background stops with the script (a failing test, a
# failed install): each part's whole process tree (a subshell, cargo or
# pytest, the test binaries or workers).
kill_tree() {
    local child
    for child in $(pgrep -P "$1" 2>/dev/null); do kill_tree "$child"; done
    kill "$1" 2>/dev/null || true
}
stop() {
    rm -f "$pip_log" "$maturin_log" "$wasm_log" "$pytest_log" "$servers_log" "$ends"
    for pid in $tests_pid $servers_pid $pytest_pid; do
        kill_tree "$pid"
    done
}
trap stop EXIT
part "server tests" "${servers[@]}" >"$servers_log" 2>&1 &
servers_pid=$!
part "library tests" "${rest[@]}" &
tests_pid=$!
if [ -n "$pip_pid" ]; then
    if ! wait "$pip_pid"; then
        cat "$pip_log" >&2
        echo "installing the Python tools into .venv failed" >&2
        exit 1
    fi
    sleep 5
    (
        VIRTUAL_ENV="$PWD/.venv" PATH="$PWD/.venv/bin:$PATH" \
            maturin develop --release -q -m crates/hearth-py/Cargo.toml --features "$py_features" \
            >"$maturin_log" 2>&1 || { cat "$maturin_log"; echo "building the Python package (maturin develop) failed"; exit 1; }
        if [ -z "${HEARTH_REQUIRE_BROWSER:-}" ] && ! page_tools; then
            echo "browser test skipped: it needs chromium, chromedriver and wasm-bindgen $wasm_bindgen_version" \
                "(cargo install wasm-bindgen-cli --version =$wasm_bindgen_version; or set HEARTH_REQUIRE_BROWSER=1 to install them)"
            rm -rf target/web
        elif scripts/wasm-build.sh >"$wasm_log" 2>&1; then
            if browser_tools; then export HEARTH_REQUIRE_BROWSER=1; fi
        else
            cat "$wasm_log"
            echo "building the browser client (scripts/wasm-build.sh) failed: the browser test skips"
            [ -z "${HEARTH_REQUIRE_BROWSER:-}" ] || exit 1
        fi
        rm -rf target/browser
        part "Python tests" .venv/bin/python -m pytest -q -n 2 crates/hearth-py/tests
        # The browser test's times beside native ones (docs/browser.md).
        if [ -f target/browser/report.md ]; then cat target/browser/report.md; fi
    ) >"$pytest_log" 2>&1 &
    pytest_pid=$!
fi
wait "$tests_pid"
tests_pid=""
# The long tests, ignored by default, where HEARTH_LONG_TESTS is set (CI
# sets it, .ci/run): the noise model's statistical checks (a minute of
# bootstraps). The fleet's fault drills (kill -9, SIGSTOP, the database
# crashing) run with the server tests, always.
if [ -n "${HEARTH_LONG_TESTS:-}" ]; then
    "${rest[@]}" --test all -- --ignored noise_matches_the_model
fi
status=0
wait "$servers_pid" || status=$?
servers_pid=""
cat "$servers_log"
[ "$status" = 0 ] || exit "$status"

if [ -n "$pytest_pid" ]; then
    status=0
    wait "$pytest_pid" || status=$?
    pytest_pid=""
    cat "$pytest_log"
    [ "$status" = 0 ] || exit "$status"
else
    echo "Python tests skipped: no $python >= 3.9 with venv (set PYTHON=...)" >&2
    [ -z "${HEARTH_REQUIRE_PYTHON:-}" ] || exit 1
fi
echo "ended (seconds from the start): $(paste -sd, "$ends" | sed 's/,/, /g')"
