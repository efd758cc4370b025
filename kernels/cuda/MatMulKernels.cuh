//===- MatMulKernels.cuh - what the matmul group's .cu files share -*- CUDA -*-===//
//
// The group's kernel files (MatMul.cu, MatMulNf4.cu, LinearCrossEntropy.cu, Convolution.cu),
// which addMatMulCudaKernels (CudaKernelGroups.h) registers together, the launch of the
// one-rounding store of an f32 accumulator, and the zeroing of a result.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_MATMULKERNELS_CUH
#define MEMC_KERNELS_CUDA_MATMULKERNELS_CUH

#include "kernels/ElementVisitors.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"

namespace memc::kernels::cuda {

void addMatMulNf4CudaKernels(CudaKernelRuns &runs);          // MatMulNf4.cu
void addLinearCrossEntropyCudaKernels(CudaKernelRuns &runs); // LinearCrossEntropy.cu
void addConvolutionCudaKernels(CudaKernelRuns &runs);        // Convolution.cu

/// Launches storeRounded (CudaLaunch.cuh) for a tensor of dtype `dtype`.
inline bool launchStoreRounded(KernelContext &context, const float *in, int64_t count, DType dtype,
                               void *out, const char *kernel) {
  if (count == 0)
    return true;
  visitFloat(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    storeRounded<T>
        <<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(in, count, static_cast<T *>(out));
  });
  return launched(context, kernel);
}

/// Zeroes `bytes` of a result on the stream (all-zero bits are +0 in every float type).
inline bool zeroBytes(KernelContext &context, void *data, size_t bytes, const char *kernel) {
  if (bytes == 0)
    return true;
  cudaError_t status = cudaMemsetAsync(data, 0, bytes, streamOf(context));
  if (status == cudaSuccess)
    return true;
  return context.fail(std::string(kernel) +
                      ": zeroing the result failed: " + cudaGetErrorString(status));
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_MATMULKERNELS_CUH
