#!/usr/bin/env bash
# Builds `hearth` and `hearth-bench` with the `gpu` feature (tfhe-rs's
# CUDA backend) on a machine without a GPU, and gathers what a GPU machine
# needs to run them into one folder, packed into one file to carry there:
#
#   dist/gpu/hearth              the command (demo, run, server, ...)
#   dist/gpu/hearth-bench        the benchmarks and fuzz-programs
#   dist/gpu/lib/                libcudart (CUDA 13.0: the one shared runtime
#                                that hearth's kernel and tfhe-rs's link) and
#                                libgomp
#   dist/gpu/hearth-gpu,         run them with those libraries
#   dist/gpu/hearth-bench-gpu
#   dist/gpu.tar.xz              all of dist/gpu (the two binaries share
#                                tfhe-rs's CUDA kernels, which xz finds):
#                                carry this one; gpu-measure.sh unpacks it
#
# Usage: scripts/gpu-build.sh [SM]     SM: compute capability, default 90 (H100)
#        scripts/gpu-build.sh lint     clippy on the gpu feature (-D warnings),
#                                      with the same compiler; builds nothing
#
# The CUDA 13.0 compiler comes from PyPI (nvidia-cuda-nvcc and friends, into
# .gpu-tools/, ignored by git), cmake from Debian. 13.0 matches the GPU
# machine's driver (580, CUDA 13.0): code from a newer CUDA would be refused.
#
# Without a GPU at build time tfhe-rs's CMake would compile for sm_70 (which
# CUDA 13 no longer supports) and leave out its Hopper bootstrap kernels
# (thread-block clusters, `CUDA_ARCH >= 900`). Two shims make it build
# native code for SM instead: a wrapper around nvcc (nvcc-no-gpu.sh) answers
# tfhe-rs's GPU probe and turns `-arch=native` into `-arch=sm_SM`, and a
# CMake toolchain file names SM as the native architecture.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
mode=build
if [ "${1:-}" = lint ]; then
    mode=lint
    shift
fi
sm=${1:-90}
tools=$root/.gpu-tools
cuda=$tools/cuda

if [ ! -x "$cuda/bin/nvcc.real" ]; then
    command -v cmake >/dev/null || { apt-get update && apt-get install -y cmake; }
    python3 -m pip install -q --no-deps --target "$tools/py" \
        nvidia-cuda-nvcc==13.0.88 nvidia-cuda-crt==13.0.88 nvidia-nvvm==13.0.88 \
        nvidia-cuda-runtime==13.0.96 nvidia-cuda-cccl==13.0.85
    rm -rf "$cuda"
    cp -r "$tools/py/nvidia/cu13" "$cuda"
    ln -sfn lib "$cuda/lib64"
    ln -sf libcudart.so.13 "$cuda/lib/libcudart.so"
    mv "$cuda/bin/nvcc" "$cuda/bin/nvcc.real"
fi
cp "$root/scripts/nvcc-no-gpu.sh" "$cuda/bin/nvcc"
chmod +x "$cuda/bin/nvcc"
# CMake's own GPU query finds none here: name the architecture it would find.
echo "set(CMAKE_CUDA_ARCHITECTURES_NATIVE \"$sm-real\")" >"$tools/toolchain.cmake"

export HEARTH_GPU_SM=$sm
export CUDA_PATH=$cuda CUDA_HOME=$cuda CUDACXX=$cuda/bin/nvcc
export PATH=$cuda/bin:$PATH
export LIBRARY_PATH=$cuda/lib${LIBRARY_PATH:+:$LIBRARY_PATH}
export CMAKE_TOOLCHAIN_FILE=$tools/toolchain.cmake

cd "$root"
if [ "$mode" = lint ]; then
    exec cargo clippy --release -p hearth -p hearth-backend -p hearth-server -p hearth-cli -p hearth-bench \
        --features hearth/gpu,hearth-server/gpu,hearth-cli/gpu,hearth-bench/gpu \
        --all-targets --target-dir target/gpu -- -D warnings
fi
cargo build --release -p hearth-cli -p hearth-bench --features hearth-cli/gpu,hearth-bench/gpu \
    --target-dir target/gpu

dist=$root/dist/gpu
rm -rf "$dist" "$dist.tar.xz"
mkdir -p "$dist/lib"
cp "$cuda/lib/libcudart.so.13" "$dist/lib/"
cp "$(gcc -print-file-name=libgomp.so.1)" "$dist/lib/"
for bin in hearth hearth-bench; do
    cp "target/gpu/release/$bin" "$dist/"
    # No symbols: it travels with the working tree (64 MiB in all).
    strip "$dist/$bin"
    {
        echo '#!/bin/sh'
        echo "# $bin built with the gpu feature, with the libraries it was built against."
        echo 'here=$(cd "$(dirname "$0")" && pwd)'
        echo 'LD_LIBRARY_PATH=$here/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec "$here/'"$bin"'" "$@"'
    } >"$dist/$bin-gpu"
    chmod +x "$dist/$bin-gpu"
done
tar -C "$root/dist" -cf - gpu | xz -9 -T0 >"$dist.tar.xz"
du -sh "$dist" "$dist.tar.xz"
# The newest glibc they need, to compare with the GPU machine's.
echo "newest glibc symbol version needed: $(objdump -T "$dist/hearth" "$dist/hearth-bench" "$dist"/lib/*.so* |
    grep -o 'GLIBC_[0-9.]*' | sort -Vu | tail -1)"
