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
#include "kernels/ReductionLayout.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

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
