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
#          max, on DIGITS_MB4_128 (the multi-bit bootstrap), DIGITS_128
#          and GATES_128, every digit checked
#   noise  100 000 gpu bootstraps at the full budget on DIGITS_MB4_128
#          and DIGITS_128, beside 10 000 on the cpu: wrong decryptions
#          and stds
#   pbs    PBS/s for batches 1 to 8 192, gpu beside 16 cpu threads,
#          multi-bit (DIGITS_MB4_128) beside classical (DIGITS_128)
#   ops    32-bit operations (both families) on the gpu on both sets,
#          beside tfhe-rs's CUDA integer API in the same run; random
#          programs on the gpu against the clear backend; the kernels
#   cpu16  the 16-thread CPU tables beside tfhe-rs on 16 threads: words on
#          the one key (DIGITS_KS32_128) at 32 and 64 bits, then Int
#   all    all of them, in that order
# Every run stays within $BUDGET_S seconds (default 540: one device
# command may run 10 minutes, and a loan is 15 with the machine's start):
# a step that would start past it is skipped, one still running then is
# stopped, and steps.tsv lists both. Give the steps that matter most
# first, or one step per call.
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
budget=${BUDGET_S:-540}
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
    for p in DIGITS_MB4_128 DIGITS_128 GATES_128; do
        step "backends-$p" $b backends --params "$p" --threads "$threads" \
            --bootstraps 10000 --json "$out/backends-$p.json"
    done
}
run_noise() {
    for p in DIGITS_MB4_128 DIGITS_128; do
        step "noise-gpu-$p" $b noise --backend gpu --params "$p" --count 100000 \
            --threads "$threads" --json "$out/noise-gpu-$p.json"
        step "noise-cpu-$p" $b noise --backend cpu --params "$p" --count 10000 \
            --threads "$threads" --json "$out/noise-cpu-$p.json"
    done
}
run_pbs() {
    for p in DIGITS_MB4_128 DIGITS_128; do
        step "pbs-$p" $b pbs --backend gpu --params "$p" --threads "$threads" \
            --max-batch 8192 --samples 3 --json "$out/pbs-$p.json"
    done
}
run_ops() {
    for p in DIGITS_MB4_128 DIGITS_128; do
        step "ops-gpu-int-$p" $b ops --backend gpu --family int --bits 32 \
            --params "$p" --threads "$threads" --json "$out/ops-gpu-int-$p.json"
        step "ops-gpu-words-$p" $b ops --backend gpu --family words --bits 32 \
            --params "$p" --threads "$threads" --json "$out/ops-gpu-words-$p.json"
    done
    step fuzz-gpu $b fuzz-programs --encrypted --backend gpu --count 20 \
        --threads "$threads"
    step kernels-gpu $b kernels --backend gpu --threads "$threads" \
        --json "$out/kernels-gpu.json"
}
run_cpu16() {
    # The words on the one key first (issue 62's targets), 32 then 64 bits.
    for bits in 32 64; do
        step "ops-cpu16-words-$bits" $b ops --backend cpu --family words --bits "$bits" \
            --params DIGITS_KS32_128 --samples 3 --threads "$threads" \
            --json "$out/ops-cpu16-words-$bits.json"
    done
    step ops-cpu16-int $b ops --backend cpu --family int --bits 32,64 \
        --params DIGITS_KS32_128 --samples 3 --threads "$threads" \
        --json "$out/ops-cpu16-int.json"
}
for s in "${steps[@]}"; do
    "run_$s"
done
echo "total $(($(date +%s) - start)) s" >>"$out/steps.tsv"
cat "$out/steps.tsv" >&2
exit $failed
