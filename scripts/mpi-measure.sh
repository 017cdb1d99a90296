#!/usr/bin/env bash
# The MPI backend's figures on this machine: each configuration of P ranks x
# T threads beside the cpu backend on P x T threads (timed apart, just
# before), and the simulator's prediction for both. Writes JSON and the
# tables into OUT (default docs/results/mpi). Needs builds with the mpi
# feature: cargo build --release -p hearth-cli -p hearth-bench
# --features hearth-cli/mpi,hearth-bench/mpi.
#
#   scripts/mpi-measure.sh [OUT]          # ~15 min on 2 cores
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-docs/results/mpi}
mkdir -p "$out"
hearth=target/release/hearth
bench=target/release/hearth-bench
# As root in a container Open MPI needs these (harmless elsewhere).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=none
cores=$(nproc)

# params bootstraps ranks threads
configs=(
    "DIGITS_128 10000 2 1"
    "DIGITS_128 2000 1 2"
    "DIGITS_128 2000 2 1"
    "DIGITS_128 2000 4 1"
    "GATES_128 2000 2 1"
)
for c in "${configs[@]}"; do
    read -r params n ranks threads <<<"$c"
    name="$params-$n-${ranks}x$threads"
    slots=$((ranks * threads))
    echo "== $name" >&2
    "$bench" engine --params "$params" --bootstraps "$n" --threads "$slots" \
        --json "$out/$name-cpu.json" >"$out/$name-cpu.md"
    if [ "$slots" -le "$cores" ]; then
        # A rank per core set of its own (Open MPI binds a rank to one
        # core by default, which a rank of T threads would then share).
        bind=(--map-by "slot:PE=$threads" --bind-to core)
        shared=()
    else
        # More slots than cores: oversubscribed, every rank on every core.
        bind=(--oversubscribe --bind-to none)
        shared=(--cores "$cores")
    fi
    mpirun "${bind[@]}" -np "$ranks" "$bench" engine --backend mpi --no-cpu \
        --params "$params" --bootstraps "$n" --threads "$threads" "${shared[@]}" \
        --json "$out/$name-mpi.json" >"$out/$name-mpi.md"
done
"$hearth" app digits --images 1 --export "$out/cnn1" >/dev/null
"$hearth" app digits --images 10 --export "$out/cnn10" >/dev/null
"$bench" simulate --circuit mul32 --circuit "$out/cnn1/program.hprog" \
    --circuit "$out/cnn10/program.hprog" --threads-per-rank 16 \
    --json "$out/simulate.json" >"$out/simulate.md"
rm -rf "$out/cnn1" "$out/cnn10"
