//===- CudaLaunch.cuh - what every CUDA kernel file uses --------*- CUDA -*-===//
//
// The stream of a launch, grid sizes and thread indices for grid-stride loops, the launch check,
// the rounding store of an f32 accumulator, and recording a data-dependent failure from device
// code (kernels/DeviceError.h); elements load and store as kernels/StoredElement.h says.
// Kernels never assume more alignment than their element size: plans are untrusted input, and
// a vectorized path checks its pointers first.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CUDALAUNCH_CUH
#define MEMC_KERNELS_CUDA_CUDALAUNCH_CUH

#include "kernels/DeviceError.h"
#include "kernels/KernelContext.h"
#include "kernels/StoredElement.h"

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

/// Blocks of a grid whose blocks loop over `count` items with a stride of the grid.
inline unsigned blocksFor(int64_t count) {
  return static_cast<unsigned>(std::clamp<int64_t>(count, 1, 0x7fffffff));
}

/// This thread's first item of a grid-stride loop, and the loop's stride.
__device__ inline int64_t gridThreadIndex() {
  return static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline int64_t gridThreads() { return static_cast<int64_t>(gridDim.x) * blockDim.x; }

/// True if the last launch was accepted; otherwise records why (a bad configuration or an
/// exhausted device, never the data) and returns false.
inline bool launched(KernelContext &context, const char *kernel) {
  cudaError_t status = cudaGetLastError();
  if (status == cudaSuccess)
    return true;
  return context.fail(std::string(kernel) + ": the launch failed: " + cudaGetErrorString(status));
}

/// out[i] = in[i] rounded to T: an f32 accumulator stored once.
template <typename T> __global__ void storeRounded(const float *in, int64_t count, T *out) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads())
    storeFloat(out, i, in[i]);
}

/// Records the first data-dependent failure of the program in `record` (null: nowhere), for
/// the host to describe at synchronization; later failures are dropped.
__device__ inline void recordDeviceError(DeviceErrorRecord *record, uint32_t step, uint32_t code,
                                         int64_t v0 = 0, int64_t v1 = 0, int64_t v2 = 0,
                                         int64_t v3 = 0) {
  // A plain read first: once one failure is recorded, the others (a tensor of bad indices may
  // have millions) skip the atomic on mapped host memory, which crosses PCIe.
  if (!record || *static_cast<volatile uint32_t *>(&record->code) != 0u ||
      atomicCAS(&record->code, 0u, code) != 0u)
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
