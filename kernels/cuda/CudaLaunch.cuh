//===- CudaLaunch.cuh - what every CUDA kernel file uses --------*- CUDA -*-===//
//
// The stream of a launch, grid sizes for grid-stride loops, the launch check, 16-bit float
// loads and stores, and recording a data-dependent failure from device code
// (kernels/DeviceError.h). Kernels never assume more alignment than their element size: plans
// are untrusted input, and a vectorized path checks its pointers first.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDALAUNCH_CUH
#define MEMC_KERNELS_CUDA_CUDALAUNCH_CUH

#include "kernels/DeviceError.h"
#include "kernels/Float16.h"
#include "kernels/KernelContext.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <string>

namespace memc::kernels::cuda {

inline cudaStream_t streamOf(const KernelContext &context) {
  return static_cast<cudaStream_t>(context.stream);
}

/// Threads per block of the simple (elementwise, grid-stride) kernels.
constexpr int kBlockThreads = 256;

/// Blocks of a grid-stride loop over `count` items: enough to fill an H100/H200 several times
/// over, never more than the items need (at least 1).
inline unsigned gridFor(int64_t count, int threads = kBlockThreads) {
  int64_t blocks = (count + threads - 1) / threads;
  return static_cast<unsigned>(std::clamp<int64_t>(blocks, 1, 132 * 32));
}

/// True if the last launch was accepted; otherwise records why (a bad configuration or an
/// exhausted device, never the data) and returns false.
inline bool launched(KernelContext &context, const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return true;
  return context.fail(std::string(kernel) + ": the launch failed: " + cudaGetErrorString(status));
}

/// Element i of a float tensor as f32, whatever its storage (float, Half, BFloat16).
template <typename T> __device__ inline float loadFloat(const T *data, int64_t i);
template <> __device__ inline float loadFloat<float>(const float *data, int64_t i) {
  return data[i];
}
template <> __device__ inline float loadFloat<Half>(const Half *data, int64_t i) {
  return halfToFloat(data[i].bits);
}
template <> __device__ inline float loadFloat<BFloat16>(const BFloat16 *data, int64_t i) {
  return bfloat16ToFloat(data[i].bits);
}

/// Stores `value` rounded to T (round to nearest even, as the CPU kernels round).
template <typename T> __device__ inline void storeFloat(T *data, int64_t i, float value);
template <> __device__ inline void storeFloat<float>(float *data, int64_t i, float value) {
  data[i] = value;
}
template <> __device__ inline void storeFloat<Half>(Half *data, int64_t i, float value) {
  data[i].bits = floatToHalf(value);
}
template <> __device__ inline void storeFloat<BFloat16>(BFloat16 *data, int64_t i, float value) {
  data[i].bits = floatToBFloat16(value);
}

/// Records the first data-dependent failure of the program in `record` (null: nowhere), for
/// the host to describe at synchronization; later failures are dropped.
__device__ inline void recordDeviceError(DeviceErrorRecord *record, uint32_t step, uint32_t code,
                                         int64_t v0 = 0, int64_t v1 = 0, int64_t v2 = 0,
                                         int64_t v3 = 0) {
  if (!record || atomicCAS(&record->code, 0u, code) != 0u)
    return;
  record->step = step;
  record->values[0] = v0;
  record->values[1] = v1;
  record->values[2] = v2;
  record->values[3] = v3;
  __threadfence_system();
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CUDALAUNCH_CUH
