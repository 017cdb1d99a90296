#!/usr/bin/env bash
# On the GPU machine, from the repository root with dist/gpu/ carried there
# (scripts/gpu-build.sh makes it): the figures issue 10 asks for, as
# markdown on stdout and JSON in $OUT (default out/gpu/).
#
# Usage: scripts/gpu-measure.sh [check|pbs|all]
#   check  demo on the gpu; gpu beside cpu on random circuits (10 000
#          bootstraps) and 32-bit add / mul / max, every digit checked
#   pbs    PBS/s for batches 1 to 16 384, gpu beside 16 cpu threads,
#          on DIGITS_128 and GATES_128
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
out=${OUT:-out/gpu}
mkdir -p "$out"
h=dist/gpu/hearth-gpu
# A GPU that cannot be used fails every command here instead of falling
# back to the cpu backend (a table of cpu beside cpu is no GPU figure).
export HEARTH_REQUIRE_GPU=1
threads=${HEARTH_THREADS:-16}
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
if [ "$what" = check ] || [ "$what" = all ]; then
    $h demo --backend gpu --threads "$threads"
    $h bench backends --params DIGITS_128 --threads "$threads" --bootstraps 10000 \
        --json "$out/backends-digits.json"
fi
if [ "$what" = pbs ] || [ "$what" = all ]; then
    for p in DIGITS_128 GATES_128; do
        $h bench pbs --backend gpu --params "$p" --threads "$threads" \
            --max-batch 16384 --samples 5 --json "$out/pbs-$p.json"
    done
fi
