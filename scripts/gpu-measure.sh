#!/usr/bin/env bash
# On the GPU machine, from the repository root with dist/gpu.tar.xz (or
# dist/gpu/) carried there (scripts/gpu-build.sh makes both): everything
# issue 34 must show, as
# markdown (one .md per step) and JSON in $OUT (default out/gpu/), with a
# log of each step's time in $OUT/steps.tsv.
#
# Usage: scripts/gpu-measure.sh [all | STEP...]   STEP: check noise pbs ops cpu16
#        (several steps run in the order given, so that the figures that
#        matter most come first when device time is short)
#   check  demo on the gpu; a job of `hearth server --backend gpu` equal
#          to the cpu's; gpu beside cpu on random circuits (10 000
#          bootstraps, many-LUT launches included) and 32-bit add / mul /
#          max, on DIGITS_128 and GATES_128, every digit checked
#   noise  100 000 gpu bootstraps at the full budget on DIGITS_128 and
#          GATES_128, beside 20 000 on the cpu: wrong decryptions and stds
#   pbs    PBS/s for batches 1 to 16 384, gpu beside 16 cpu threads
#   ops    32-bit operations (both families) and the kernels on the gpu,
#          beside tfhe-rs's CUDA integer API in the same run
#   cpu16  the 16-thread CPU tables: hearth-bench ops (both families) and
#          kernels beside tfhe-rs on 16 threads
#   all    all of them, in that order
# Every run stays within $BUDGET_S seconds (default 1380, 23 min): a step
# that would start past it is skipped, one still running then is stopped,
# and steps.tsv lists both.
set -uo pipefail
cd "$(dirname "$0")/.."
steps=("$@")
[ ${#steps[@]} -eq 0 ] && steps=(all)
[ "${steps[0]}" = all ] && steps=(check noise pbs ops cpu16)
for s in "${steps[@]}"; do
    case $s in
    check | noise | pbs | ops | cpu16) ;;
    *)
        echo "gpu-measure.sh: unknown step '$s' (all, check, noise, pbs, ops, cpu16)" >&2
        exit 2
        ;;
    esac
done
out=${OUT:-out/gpu}
mkdir -p "$out"
if [ ! -x dist/gpu/hearth-gpu ] && [ -f dist/gpu.tar.xz ]; then
    xz -dc dist/gpu.tar.xz | tar -C dist -xf -
fi
h=dist/gpu/hearth-gpu
b=dist/gpu/hearth-bench-gpu
# A GPU that cannot be used fails every command here instead of falling
# back to the cpu backend (a table of cpu beside cpu is no GPU figure).
export HEARTH_REQUIRE_GPU=1
threads=${HEARTH_THREADS:-16}
budget=${BUDGET_S:-1380}
start=$(date +%s)
failed=0
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv >"$out/device.csv" 2>&1 || true
nproc >"$out/cores.txt"
printf 'step\tseconds\tstatus\n' >"$out/steps.tsv"

# step NAME COMMAND...: runs COMMAND with its markdown into $out/NAME.md,
# unless the budget is spent; records its time and exit status.
step() {
    local name=$1
    shift
    local now=$(($(date +%s) - start))
    if [ "$now" -ge "$budget" ]; then
        printf '%s\t0\tskipped (budget)\n' "$name" >>"$out/steps.tsv"
        echo "== $name: skipped, ${now}s of ${budget}s spent" >&2
        return
    fi
    echo "== $name (at ${now}s)" >&2
    local t0=$(date +%s)
    # A step still running when the budget ends is stopped there, so the
    # steps before it and the log come back within the device's time.
    timeout --kill-after=10 "$((budget - now))" "$@" >"$out/$name.md" 2>"$out/$name.log"
    local rc=$?
    local dt=$(($(date +%s) - t0))
    if [ $rc -eq 0 ]; then
        printf '%s\t%s\tok\n' "$name" "$dt" >>"$out/steps.tsv"
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        printf '%s\t%s\tstopped (budget)\n' "$name" "$dt" >>"$out/steps.tsv"
        failed=1
    else
        printf '%s\t%s\tfailed (exit %s)\n' "$name" "$dt" "$rc" >>"$out/steps.tsv"
        echo "== $name failed (exit $rc); last lines of its log:" >&2
        tail -5 "$out/$name.log" >&2
        failed=1
    fi
}

run_check() {
    step demo $h demo --backend gpu --threads "$threads"
    step server-gpu scripts/gpu-server-check.sh "$h" "$threads"
    for p in DIGITS_128 GATES_128; do
        step "backends-$p" $b backends --params "$p" --threads "$threads" \
            --bootstraps 10000 --json "$out/backends-$p.json"
    done
}
run_noise() {
    for p in DIGITS_128 GATES_128; do
        step "noise-gpu-$p" $b noise --backend gpu --params "$p" --count 100000 \
            --threads "$threads" --json "$out/noise-gpu-$p.json"
        step "noise-cpu-$p" $b noise --backend cpu --params "$p" --count 20000 \
            --threads "$threads" --json "$out/noise-cpu-$p.json"
    done
}
run_pbs() {
    for p in DIGITS_128 GATES_128; do
        step "pbs-$p" $b pbs --backend gpu --params "$p" --threads "$threads" \
            --max-batch 16384 --samples 5 --json "$out/pbs-$p.json"
    done
}
run_ops() {
    step ops-gpu-digits $b ops --backend gpu --family int --bits 32 \
        --threads "$threads" --json "$out/ops-gpu-digits.json"
    step ops-gpu-bits $b ops --backend gpu --family words --bits 32 \
        --threads "$threads" --json "$out/ops-gpu-bits.json"
    step fuzz-gpu $b fuzz-programs --encrypted --backend gpu --count 20 \
        --threads "$threads"
    step kernels-gpu $b kernels --backend gpu --threads "$threads" \
        --json "$out/kernels-gpu.json"
}
run_cpu16() {
    # The kernels first: the H200's run ran out of time before them.
    step kernels-cpu16 $b kernels --backend cpu --threads "$threads" \
        --json "$out/kernels-cpu16.json"
    step ops-cpu16-digits $b ops --backend cpu --family int --threads "$threads" \
        --json "$out/ops-cpu16-digits.json"
    step ops-cpu16-bits $b ops --backend cpu --family words --threads "$threads" \
        --json "$out/ops-cpu16-bits.json"
}
for s in "${steps[@]}"; do
    "run_$s"
done
echo "total $(($(date +%s) - start)) s" >>"$out/steps.tsv"
cat "$out/steps.tsv" >&2
exit $failed
