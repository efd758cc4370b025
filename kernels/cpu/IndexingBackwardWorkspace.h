//===- IndexingBackwardWorkspace.h - CPU workspace layouts -------*- C++ -*-===//
//
// The scratch layout of gather_grad: what the run functions carve from call.workspace
// and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both (Workspace.h).
// Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_INDEXINGBACKWARDWORKSPACE_H
#define MEMC_KERNELS_CPU_INDEXINGBACKWARDWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// gather_grad's tasks: destination slices (outer index, row) of `inner` elements.
struct GatherGradTasks {
  int64_t dim, count, outer = 1, inner = 1, grain;

  explicit GatherGradTasks(const KernelCall &call) {
    const Shape &shape = call.outputs[0].shape;
    int64_t axis = attributesOf(call).intOr("axis", 0);
    dim = shape[axis];
    count = call.inputs[1].numElements();
    for (int64_t d = 0; d < axis; ++d)
      outer *= shape[d];
    for (int64_t d = axis + 1; d < static_cast<int64_t>(shape.size()); ++d)
      inner *= shape[d];
    grain = std::max<int64_t>(1, kElementwiseGrain / std::max<int64_t>(inner, 1));
  }
  int64_t tasks() const { return outer * dim; }
};

struct GatherGradScratch {
  int64_t *rows = nullptr, *starts = nullptr, *order = nullptr;
  float *sums = nullptr; // f16/bf16: `inner` floats per slot
};

inline GatherGradScratch carveGatherGrad(const KernelCall &call, WorkspaceCarver &carver) {
  GatherGradTasks tasks(call);
  GatherGradScratch scratch;
  scratch.rows = carver.take<int64_t>(tasks.count);
  scratch.starts = carver.take<int64_t>(tasks.dim + 1);
  scratch.order = carver.take<int64_t>(tasks.count);
  if (call.outputs[0].dtype != DType::F32)
    scratch.sums = carver.take<float>(workspaceSlots(0, tasks.tasks(), tasks.grain) * tasks.inner);
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_INDEXINGBACKWARDWORKSPACE_H
