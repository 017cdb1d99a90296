// Linear combinations of stored ciphertexts, one output LWE per row: the
// only GPU code of hearth's own (key switch and bootstrap are tfhe-rs's).
// Row r is sum_t weight[t] * store[slot[t]] over t in [start[r], start[r+1]),
// plus constant[r] * delta on the body, all modulo 2^64.
#include <cstdint>
#include <cuda_runtime.h>

__global__ void hearth_combine_rows(uint64_t *out, const uint64_t *store,
                                    const uint32_t *start, const uint32_t *slot,
                                    const uint64_t *weight,
                                    const uint64_t *constant, uint32_t lwe_size,
                                    uint64_t delta) {
  const uint32_t r = blockIdx.x;
  const uint32_t t0 = start[r];
  const uint32_t t1 = start[r + 1];
  uint64_t *o = out + (uint64_t)r * lwe_size;
  for (uint32_t c = threadIdx.x; c < lwe_size; c += blockDim.x) {
    uint64_t acc = 0;
    for (uint32_t t = t0; t < t1; t++) {
      acc += weight[t] * store[(uint64_t)slot[t] * lwe_size + c];
    }
    if (c == lwe_size - 1) {
      acc += constant[r] * delta;
    }
    o[c] = acc;
  }
}

// Enqueues the combination of `rows` rows on `stream`; returns the CUDA
// error code of the launch (0 on success).
extern "C" int hearth_combine_rows_64(void *stream, uint32_t gpu_index,
                                      uint64_t *out, const uint64_t *store,
                                      const uint32_t *start,
                                      const uint32_t *slot,
                                      const uint64_t *weight,
                                      const uint64_t *constant, uint32_t rows,
                                      uint32_t lwe_size, uint64_t delta) {
  if (rows == 0) {
    return 0;
  }
  cudaError_t e = cudaSetDevice((int)gpu_index);
  if (e != cudaSuccess) {
    return (int)e;
  }
  hearth_combine_rows<<<rows, 256, 0, (cudaStream_t)stream>>>(
      out, store, start, slot, weight, constant, lwe_size, delta);
  return (int)cudaGetLastError();
}

// Free device memory on `gpu_index`, in bytes, into `free_bytes`; returns the
// CUDA error code (0 on success).
extern "C" int hearth_cuda_free_memory(uint32_t gpu_index,
                                       uint64_t *free_bytes) {
  cudaError_t e = cudaSetDevice((int)gpu_index);
  if (e != cudaSuccess) {
    return (int)e;
  }
  size_t free_mem = 0, total_mem = 0;
  e = cudaMemGetInfo(&free_mem, &total_mem);
  *free_bytes = (uint64_t)free_mem;
  return (int)e;
}

// The message of a CUDA error code.
extern "C" const char *hearth_cuda_error_string(int code) {
  return cudaGetErrorString((cudaError_t)code);
}
