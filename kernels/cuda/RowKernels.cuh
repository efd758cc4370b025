//===- RowKernels.cuh - what the CUDA row kernel files share ----*- CUDA -*-===//
//
// The row group's kernels (softmax, the normalizations, batch_norm, the reductions, cumsum,
// cross_entropy) reduce within a warp or a block: a butterfly of shuffles in which every lane
// combines the lower lanes' part with the upper lanes' (so all lanes end with the same bits),
// then the warps' results in warp order. The order is fixed by the block size alone, which is a
// function of the shapes: the same call gives the same bits on every run.
//
// Rows shared by a block loop with a stride of the grid (rows may outnumber what one grid
// holds); every loop that contains a block reduction is uniform across the block.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ROWKERNELS_CUH
#define MEMC_KERNELS_CUDA_ROWKERNELS_CUH

#include "kernels/ElementVisitors.h"
#include "kernels/Kernel.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/RowMath.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

namespace memc::kernels::cuda::rows {

/// The most threads a row kernel's block has (its __launch_bounds__).
constexpr int kMaxRowThreads = 512;

//===----------------------------------------------------------------------===//
// Warp and block reductions
//===----------------------------------------------------------------------===//

/// `value` of the lane `mask` away (by xor), for any trivially copyable type of whole 32-bit
/// words (a float, a double, a struct of sums).
template <typename V> __device__ inline V shuffleXor(V value, int mask) {
  static_assert(sizeof(V) % 4 == 0, "shuffles move whole 32-bit words");
  uint32_t words[sizeof(V) / 4];
  memcpy(words, &value, sizeof value);
  for (uint32_t &word : words)
    word = __shfl_xor_sync(0xffffffffu, word, mask);
  memcpy(&value, words, sizeof value);
  return value;
}

/// The same from the lane `delta` below (a lane below delta keeps its own value).
template <typename V> __device__ inline V shuffleUp(V value, int delta) {
  static_assert(sizeof(V) % 4 == 0, "shuffles move whole 32-bit words");
  uint32_t words[sizeof(V) / 4];
  memcpy(words, &value, sizeof value);
  for (uint32_t &word : words)
    word = __shfl_up_sync(0xffffffffu, word, delta);
  memcpy(&value, words, sizeof value);
  return value;
}

/// The combination of the warp's 32 values in every lane: a balanced tree over lane order
/// (pairs of neighbours first), the lower part always on the left.
template <typename V, typename Combine>
__device__ inline V warpAllReduce(V value, Combine combine) {
  int lane = threadIdx.x % kWarpSize;
  for (int mask = 1; mask < kWarpSize; mask *= 2) {
    V other = shuffleXor(value, mask);
    value = (lane & mask) ? combine(other, value) : combine(value, other);
  }
  return value;
}

/// The combination of the block's values, in thread order (lanes, then warps), in every
/// thread. Every thread of the block calls it; blockDim.x is a multiple of 32.
template <typename V, typename Combine>
__device__ inline V blockAllReduce(V value, Combine combine) {
  __shared__ __align__(16) unsigned char storage[kWarpSize * sizeof(V)];
  V *partials = reinterpret_cast<V *>(storage);
  value = warpAllReduce(value, combine);
  if (threadIdx.x % kWarpSize == 0)
    partials[threadIdx.x / kWarpSize] = value;
  __syncthreads();
  V total = partials[0];
  for (int warp = 1; warp < static_cast<int>(blockDim.x / kWarpSize); ++warp)
    total = combine(total, partials[warp]);
  // The next reduction of this type may overwrite the partials once everyone has read them.
  __syncthreads();
  return total;
}

//===----------------------------------------------------------------------===//
// Row statistics shared by a block
//===----------------------------------------------------------------------===//

/// softmaxStatistics (RowMath.h) of a row shared by the block.
template <typename Row>
__device__ SoftmaxStatistics blockSoftmaxStatistics(const Row &x, int64_t n) {
  float max = kNegativeInfinity;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    max = maxSkippingNaN(max, x.load(j));
  max = blockAllReduce(max, MaxSkippingNaN{});
  double sum = 0.0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    sum += expf(x.load(j) - max);
  return {max, blockAllReduce(sum, Add{})};
}

/// rowStatistics (RowMath.h) of a row shared by the block, summed in f64 as there.
template <bool Centered, typename Row>
__device__ RowStatistics blockRowStatistics(const Row &x, int64_t n, double epsilon) {
  double mean = 0.0;
  if constexpr (Centered) {
    double sum = 0.0;
    for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
      sum += x.load(j);
    mean = blockAllReduce(sum, Add{}) / static_cast<double>(n);
  }
  double squares = 0.0;
  for (int64_t j = threadIdx.x; j < n; j += blockDim.x)
    squares += squaredDeviation(x.load(j), mean);
  return {mean, inverseDeviation(blockAllReduce(squares, Add{}), n, epsilon)};
}

//===----------------------------------------------------------------------===//
// Launch shapes and operands (host)
//===----------------------------------------------------------------------===//

/// Threads of a block sharing rows of `width` elements: about `perThread` elements each, whole
/// warps, at most `maxThreads`.
inline int rowThreads(int64_t width, int perThread = 4, int maxThreads = kMaxRowThreads) {
  int64_t warps = (width + perThread * kWarpSize - 1) / (perThread * kWarpSize);
  return static_cast<int>(std::clamp<int64_t>(warps, 1, maxThreads / kWarpSize) * kWarpSize);
}

inline FloatVector floatVector(const TensorView &tensor) {
  return FloatVector{tensor.data, tensor.dtype};
}

/// The call's input `index` as a FloatVector, or zeros where the call has fewer inputs.
inline FloatVector optionalFloatVector(const KernelCall &call, size_t index) {
  return index < call.inputs.size() ? floatVector(call.inputs[index])
                                    : FloatVector{nullptr, DType::F32};
}

inline MutableFloatVector mutableFloatVector(const TensorView &tensor) {
  return MutableFloatVector{tensor.data, tensor.dtype};
}

inline IndexVector indexVector(const TensorView &tensor) {
  return IndexVector{tensor.data, tensor.dtype == DType::I64};
}

//===----------------------------------------------------------------------===//
// The group's files (Rows.cu adds them all)
//===----------------------------------------------------------------------===//

void addSoftmaxCudaKernels(CudaKernelRuns &runs);      // Softmax.cu
void addRowNormCudaKernels(CudaKernelRuns &runs);      // RowNorm.cu
void addBatchNormCudaKernels(CudaKernelRuns &runs);    // BatchNorm.cu
void addReductionCudaKernels(CudaKernelRuns &runs);    // Reduction.cu
void addScanCudaKernels(CudaKernelRuns &runs);         // Scan.cu
void addCrossEntropyCudaKernels(CudaKernelRuns &runs); // CrossEntropy.cu

} // namespace memc::kernels::cuda::rows

#endif // MEMC_KERNELS_CUDA_ROWKERNELS_CUH
