//===- ElementwiseKernels.cuh - what the elementwise .cu files share --*- CUDA -*-===//
//
// The elementwise kernels are one grid-stride kernel around a body (ElementwiseMath.h) per op
// and element type, dispatched on the storage types by kernels/ElementVisitors.h; this header has
// that kernel, its launch, the choice of its index type and the registration of each file of the
// group (Elementwise.cu calls them all).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ELEMENTWISEKERNELS_CUH
#define MEMC_KERNELS_CUDA_ELEMENTWISEKERNELS_CUH

#include "kernels/ElementVisitors.h"
#include "kernels/Kernel.h"
#include "kernels/cuda/CudaKernelGroups.h"
#include "kernels/cuda/CudaLaunch.cuh"
#include "kernels/cuda/ElementwiseMath.h"

#include <cstdint>
#include <limits>

namespace memc::kernels::cuda {

void addUnaryCudaKernels(CudaKernelRuns &runs);     // Unary.cu
void addBinaryCudaKernels(CudaKernelRuns &runs);    // Binary.cu
void addLossScaleCudaKernels(CudaKernelRuns &runs); // LossScale.cu

/// Calls fn(TypeTag<Index>) with the narrowest index type that numbers `count` elements.
template <typename Fn> decltype(auto) visitIndexFor(int64_t count, Fn &&fn) {
  if (count <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    return fn(TypeTag<uint32_t>{});
  return fn(TypeTag<uint64_t>{});
}

/// body(i) for every i < count, over a grid-stride loop.
template <typename Body> __global__ void forEachElement(int64_t count, Body body) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads())
    body(i);
}

/// Launches forEachElement on the context's stream (nothing for no elements); false with the
/// reason if the launch failed.
template <typename Body>
bool launchForEach(KernelContext &context, const char *kernel, int64_t count, const Body &body) {
  if (count == 0)
    return true;
  forEachElement<<<gridFor(count), kBlockThreads, 0, streamOf(context)>>>(count, body);
  return launched(context, kernel);
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_ELEMENTWISEKERNELS_CUH
