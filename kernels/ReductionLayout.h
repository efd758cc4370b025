//===- ReductionLayout.h - a reduction's merged dimension groups -*- C++ -*-===//
//
// How a reduction over sorted axes walks its input: the dimensions merged into alternating
// kept and reduced groups (size-1 ones dropped), the innermost kept group split off as the
// width of adjacent outputs. One computation for the CPU reductions (cpu/ReductionWorkspace.h)
// and the CUDA ones' plans (cuda/ReductionMath.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_REDUCTIONLAYOUT_H
#define MEMC_KERNELS_REDUCTIONLAYOUT_H

#include "kernels/ShapeRules.h"

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

namespace memc::kernels {

/// Merged kept and reduced dimension groups of one reduction, with the input's strides.
struct ReductionLayout {
  Shape outerDims, outerStrides;     // kept groups, except an innermost kept one
  Shape reducedDims, reducedStrides; // reduced groups
  int64_t width = 1;                 // the innermost kept group's size, else 1
  int64_t outputs = 1, count = 1;

  ReductionLayout(const Shape &input, const std::vector<int64_t> &axes) {
    std::vector<int64_t> strides(input.size(), 1);
    for (size_t d = input.size(); d-- > 1;)
      strides[d - 1] = strides[d] * input[d];
    Shape keptDims, keptStrides;
    int lastKind = -1; // 0 kept, 1 reduced
    for (size_t d = 0; d < input.size(); ++d) {
      if (input[d] == 1)
        continue;
      int kind = std::binary_search(axes.begin(), axes.end(), static_cast<int64_t>(d)) ? 1 : 0;
      Shape &dims = kind ? reducedDims : keptDims;
      Shape &groupStrides = kind ? reducedStrides : keptStrides;
      if (kind == lastKind) {
        dims.back() *= input[d];
        groupStrides.back() = strides[d];
      } else {
        dims.push_back(input[d]);
        groupStrides.push_back(strides[d]);
      }
      lastKind = kind;
    }
    for (int64_t dim : keptDims)
      outputs *= dim;
    for (int64_t dim : reducedDims)
      count *= dim;
    if (lastKind == 0) {
      width = keptDims.back();
      keptDims.pop_back();
      keptStrides.pop_back();
    }
    outerDims = std::move(keptDims);
    outerStrides = std::move(keptStrides);
    if (reducedDims.empty()) {
      reducedDims.push_back(1);
      reducedStrides.push_back(0);
    }
  }
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_REDUCTIONLAYOUT_H
