//===- ElementTypes.h - C++ types of the element types ----------*- C++ -*-===//
//
// Kernels are templates over the storage type of their elements: Element<T> (how a stored
// value is computed on, kernels/StoredElement.h) and the visit* dispatch of a DType to a generic
// lambda taking a TypeTag<T> (kernels/ElementVisitors.h) are shared with the CUDA kernels; here
// is what only the CPU kernels add.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ELEMENTTYPES_H
#define MEMC_KERNELS_CPU_ELEMENTTYPES_H

#include "kernels/ElementVisitors.h"
#include "kernels/StoredElement.h"
#include "kernels/Tensor.h"

#include <cstdint>

namespace memc::kernels {

/// A float tensor's values as f32 in `values` (numElements of them), which it returns.
inline float *loadAsFloat(const TensorView &tensor, float *values) {
  visitFloat(tensor.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *data = tensor.as<T>();
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      values[i] = Element<T>::load(data[i]);
  });
  return values;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ELEMENTTYPES_H
