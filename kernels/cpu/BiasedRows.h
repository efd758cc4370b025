//===- BiasedRows.h - rows with a bias along the last axis ------*- C++ -*-===//
//
// bias_gelu and bias_gelu_grad add a bias of the last dimension's length to every row of their
// input. The bias has any float type (an f32 weight with 16-bit data under --precision), and the
// rows go over threads whole, so each element takes the same code path whatever the thread
// count.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_BIASEDROWS_H
#define MEMC_KERNELS_CPU_BIASEDROWS_H

#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/ThreadPool.h"

#include <algorithm>

namespace memc::kernels {

/// Calls fn(data tag, bias tag) with the storage types of the data and the bias.
template <typename Fn> void visitDataAndBias(DType data, DType bias, Fn &&fn) {
  visitFloat(data, [&](auto dataTag) {
    visitFloat(bias, [&](auto biasTag) { fn(dataTag, biasTag); });
  });
}

/// Calls body(offset) with the first element's offset of each row of `width` elements among
/// `elements`, over threads in tasks of about `grain` elements.
template <typename Body>
void parallelForRows(int64_t elements, int64_t width, int64_t grain, Body body) {
  if (width == 0)
    return;
  parallelFor(0, elements / width, std::max<int64_t>(1, grain / width),
              [&](int64_t begin, int64_t end) {
                for (int64_t row = begin; row < end; ++row)
                  body(row * width);
              });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_BIASEDROWS_H
