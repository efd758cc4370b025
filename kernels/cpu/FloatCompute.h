//===- FloatCompute.h - float kernels that compute in f32 -------*- C++ -*-===//
//
// Kernels built on f32 sgemm (conv and its gradients, matmul) take f16/bf16 tensors by widening
// them to f32 scratch and rounding the f32 result once at the end; f32 tensors are used in
// place.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_FLOATCOMPUTE_H
#define MEMC_KERNELS_CPU_FLOATCOMPUTE_H

#include "kernels/Kernel.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ThreadPool.h"

#include <cstdint>
#include <type_traits>
#include <vector>

namespace memc::kernels {

/// The tensor's values as f32: its own buffer for f32, else a widened copy in `scratch`.
template <typename T> const float *asFloat(const TensorView &tensor, std::vector<float> &scratch) {
  if constexpr (std::is_same_v<T, float>) {
    return tensor.as<float>();
  } else {
    scratch.resize(static_cast<size_t>(tensor.numElements()));
    const T *data = tensor.as<T>();
    parallelFor(0, tensor.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        scratch[i] = Element<T>::load(data[i]);
    });
    return scratch.data();
  }
}

/// Runs compute(a, b, result) on f32 views of the call's first two inputs and its output, all of
/// the output's float type.
template <typename Compute> void runInFloat(const KernelCall &call, Compute compute) {
  const TensorView &result = call.outputs[0];
  visitFloat(result.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    std::vector<float> aScratch, bScratch, resultScratch;
    const float *a = asFloat<T>(call.inputs[0], aScratch);
    const float *b = asFloat<T>(call.inputs[1], bScratch);
    if constexpr (std::is_same_v<T, float>) {
      compute(a, b, result.as<float>());
    } else {
      resultScratch.resize(static_cast<size_t>(result.numElements()));
      compute(a, b, resultScratch.data());
      T *y = result.as<T>();
      parallelFor(0, result.numElements(), kElementwiseGrain, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i)
          y[i] = Element<T>::store(resultScratch[i]);
      });
    }
  });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_FLOATCOMPUTE_H
