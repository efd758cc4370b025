//===- ElementwiseKernels.cuh - what the elementwise .cu files share --*- CUDA -*-===//
//
// The elementwise kernels are one grid-stride kernel around a body (ElementwiseMath.h) per op
// and element type; this header has that kernel, its launch, the DType-to-storage-type
// dispatch and the registration of each file of the group (Elementwise.cu calls them all).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ELEMENTWISEKERNELS_CUH
#define MEMC_KERNELS_CUDA_ELEMENTWISEKERNELS_CUH

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

template <typename T> struct TypeTag { using type = T; };

/// Calls fn(TypeTag<storage type>) for a dtype of the set (the op's check made sure of it;
/// another takes the first branch rather than crashing).
template <typename Fn> decltype(auto) visitFloat(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F16:
    return fn(TypeTag<Half>{});
  case DType::BF16:
    return fn(TypeTag<BFloat16>{});
  default:
    return fn(TypeTag<float>{});
  }
}

template <typename Fn> decltype(auto) visitNumeric(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::I64:
    return fn(TypeTag<int64_t>{});
  case DType::I32:
    return fn(TypeTag<int32_t>{});
  default:
    return visitFloat(dtype, fn);
  }
}

template <typename Fn> decltype(auto) visitAny(DType dtype, Fn &&fn) {
  if (dtype == DType::Bool)
    return fn(TypeTag<BoolByte>{});
  return visitNumeric(dtype, fn);
}

template <TypeClass Class, typename Fn> decltype(auto) visitClass(DType dtype, Fn &&fn) {
  if constexpr (Class == TypeClass::Float)
    return visitFloat(dtype, fn);
  else if constexpr (Class == TypeClass::Numeric)
    return visitNumeric(dtype, fn);
  else if constexpr (Class == TypeClass::Bool)
    return fn(TypeTag<BoolByte>{});
  else
    return visitAny(dtype, fn);
}

/// Kernels that move elements without looking at them see unsigned integers of their size.
template <typename Fn> decltype(auto) visitBits(DType dtype, Fn &&fn) {
  switch (dtypeSize(dtype)) {
  case 1:
    return fn(TypeTag<uint8_t>{});
  case 2:
    return fn(TypeTag<uint16_t>{});
  case 8:
    return fn(TypeTag<uint64_t>{});
  default:
    return fn(TypeTag<uint32_t>{});
  }
}

/// Calls fn(TypeTag<Index>) with the narrowest index type that numbers `count` elements.
template <typename Fn> decltype(auto) visitIndex(int64_t count, Fn &&fn) {
  if (count <= static_cast<int64_t>(std::numeric_limits<uint32_t>::max()))
    return fn(TypeTag<uint32_t>{});
  return fn(TypeTag<uint64_t>{});
}

/// body(i) for every i < count, over a grid-stride loop.
template <typename Body> __global__ void forEachElement(int64_t count, Body body) {
  int64_t stride = static_cast<int64_t>(gridDim.x) * blockDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride)
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
