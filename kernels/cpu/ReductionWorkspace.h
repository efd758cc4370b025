//===- ReductionWorkspace.h - CPU workspace layouts --------------*- C++ -*-===//
//
// The scratch layout of the reductions (reduce_sum, _mean, _max, _prod, _l2, _log_sum_exp):
// what the run functions carve from call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both
// (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_REDUCTIONWORKSPACE_H
#define MEMC_KERNELS_CPU_REDUCTIONWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

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

inline constexpr int64_t kWidthBlock = 256;

inline constexpr int64_t kReduceBlock = int64_t{1} << 16;

/// Fewer output blocks than this cannot keep a many-core machine busy.
inline constexpr int64_t kFewTasks = 32;

/// The partial results reduce() keeps when it cuts the reduced range into blocks (whether it
/// does depends on the shape only, never on the thread count, so that every machine sums in the
/// same order); 0 when it does not.
inline int64_t partialResults(const ReductionLayout &layout) {
  int64_t blockWidth = std::min(layout.width, kWidthBlock);
  int64_t tasks = (layout.outputs / layout.width) * ((layout.width + blockWidth - 1) / blockWidth);
  if (tasks >= kFewTasks || layout.count < 2 * kReduceBlock)
    return 0;
  return tasks * ((layout.count + kReduceBlock - 1) / kReduceBlock) * blockWidth;
}

inline ReductionLayout layoutOf(const KernelCall &call) {
  std::vector<int64_t> axes;
  attributesOf(call).getInts("axes", axes);
  return ReductionLayout(call.inputs[0].shape, axes);
}

inline uint64_t *carveReduce(const KernelCall &call, WorkspaceCarver &carver) {
  ReductionLayout layout = layoutOf(call);
  if (layout.outputs == 0)
    return nullptr;
  return carver.take<uint64_t>(partialResults(layout));
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_REDUCTIONWORKSPACE_H
