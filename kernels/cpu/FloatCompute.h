//===- FloatCompute.h - float kernels that compute in f32 -------*- C++ -*-===//
//
// Kernels built on f32 sgemm (conv and its gradients) take f16/bf16 tensors by widening
// them to f32 scratch and rounding the f32 result once at the end; f32 tensors are used in
// place. The scratch is part of the kernel's workspace (Kernel.h): carveFloatOperands lays it
// out.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_FLOATCOMPUTE_H
#define MEMC_KERNELS_CPU_FLOATCOMPUTE_H

#include "kernels/Kernel.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <cstdint>
#include <type_traits>

namespace memc::kernels {

/// f32 scratch for the first two inputs and the output of a call whose output is f16/bf16; all
/// null for f32, whose tensors are used in place.
struct FloatOperands {
  float *a = nullptr, *b = nullptr, *result = nullptr;
};

inline FloatOperands carveFloatOperands(const KernelCall &call, WorkspaceCarver &carver) {
  FloatOperands scratch;
  if (call.outputs[0].dtype == DType::F32)
    return scratch;
  scratch.a = carver.take<float>(call.inputs[0].numElements());
  scratch.b = carver.take<float>(call.inputs[1].numElements());
  scratch.result = carver.take<float>(call.outputs[0].numElements());
  return scratch;
}

/// The tensor's values as f32: its own buffer for f32, else a widened copy in `scratch`.
template <typename T> const float *asFloat(const TensorView &tensor, float *scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return tensor.as<float>();
  } else {
    const T *data = tensor.as<T>();
    parallelFor(0, tensor.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        scratch[i] = Element<T>::load(data[i]);
    });
    return scratch;
  }
}

/// Rounds the f32 `values` into the f16/bf16 `tensor`.
template <typename T> void storeFromFloat(const float *values, const TensorView &tensor) {
  T *y = tensor.as<T>();
  parallelFor(0, tensor.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      y[i] = Element<T>::store(values[i]);
  });
}

/// Runs compute(a, b, result) on f32 views of the call's first two inputs and its output, all of
/// the output's float type; `scratch` is carveFloatOperands' layout in the call's workspace.
template <typename Compute>
void runInFloat(const KernelCall &call, const FloatOperands &scratch, Compute compute) {
  const TensorView &result = call.outputs[0];
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const float *a = asFloat<T>(call.inputs[0], scratch.a);
    const float *b = asFloat<T>(call.inputs[1], scratch.b);
    if constexpr (std::is_same_v<T, float>) {
      compute(a, b, result.as<float>());
    } else {
      compute(a, b, scratch.result);
      storeFromFloat<T>(scratch.result, result);
    }
  });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_FLOATCOMPUTE_H
