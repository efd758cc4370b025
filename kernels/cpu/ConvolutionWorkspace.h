//===- ConvolutionWorkspace.h - the CPU workspace of conv --------*- C++ -*-===//
//
// The scratch layout of conv: what the run functions carve from call.workspace
// and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both (Workspace.h).
// Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONWORKSPACE_H
#define MEMC_KERNELS_CPU_CONVOLUTIONWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/ConvolutionColumns.h"
#include "kernels/cpu/FloatCompute.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/OneDnnConvolution.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>
#include <optional>

namespace memc::kernels {

struct ConvScratch {
  FloatOperands operands;
  float *bias = nullptr;
  float *columns = nullptr; // one block per task slot (ConvolutionTasks.h), slotStride apart
  int64_t slotStride = 0;
  std::optional<OneDnnConvScratch> oneDnn; // set when oneDNN runs the call
};

/// conv's scratch slots: one per concurrent (image, group) task where a task's column block is
/// small (kSmallSlotElements), else 1.
inline int64_t convSlots(const ConvGeometry &g) {
  if (columnBlockElements(g) > kSmallSlotElements)
    return 1;
  return taskSlots(g, g.batch * g.group);
}

inline ConvScratch carveConv(const KernelCall &call, WorkspaceCarver &carver) {
  ConvScratch scratch;
  if (call.outputs[0].numElements() == 0)
    return scratch;
  if (auto sizes = oneDnnConvolution(call, ConvDirection::Forward)) {
    scratch.oneDnn = carveOneDnnConv(*sizes, carver);
    return scratch;
  }
  ConvGeometry g(call.inputs[0].shape, call.inputs[1].shape, call.outputs[0].shape,
                 attributesOf(call));
  scratch.operands = carveFloatOperands(call, carver);
  if (call.inputs.size() == 3)
    scratch.bias = carver.take<float>(call.inputs[2].numElements());
  if (!g.isPointwise()) {
    scratch.slotStride = columnBlockElements(g);
    scratch.columns = carver.take<float>(convSlots(g) * scratch.slotStride);
  }
  return scratch;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVOLUTIONWORKSPACE_H
