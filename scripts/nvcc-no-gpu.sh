#!/bin/sh
# nvcc for a machine without a GPU, building for HEARTH_GPU_SM (installed as
# bin/nvcc by gpu-build.sh, beside the real one, bin/nvcc.real): tfhe-rs's
# GPU probe (check_cuda.cu) answers that architecture, and `-arch=native`
# (which CMake passes, and nvcc would turn into its default, sm_75) names it.
here=$(dirname "$0")
sm=${HEARTH_GPU_SM:?set HEARTH_GPU_SM, e.g. 90}
probe=
out=
prev=
for a in "$@"; do
    case $a in *check_cuda.cu) probe=1 ;; esac
    [ "$prev" = "-o" ] && out=$a
    prev=$a
done
if [ -n "$probe" ] && [ -n "$out" ]; then
    printf '#!/bin/sh\nprintf -- "-arch=sm_%s"\n' "$sm" >"$out"
    chmod +x "$out"
    exit 0
fi
n=$#
while [ "$n" -gt 0 ]; do
    a=$1
    shift
    [ "$a" = "-arch=native" ] && a="-arch=sm_$sm"
    set -- "$@" "$a"
    n=$((n - 1))
done
exec "$here/nvcc.real" "$@"
