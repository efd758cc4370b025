//===- PoolingBackwardWorkspace.h - CPU workspace layouts --------*- C++ -*-===//
//
// The scratch layout of max_pool_grad and avg_pool_grad: what the run functions carve from
// call.workspace and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both
// (Workspace.h). Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_POOLINGBACKWARDWORKSPACE_H
#define MEMC_KERNELS_CPU_POOLINGBACKWARDWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/PoolWindows.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// Planes of the result go in pieces of at least this many.
inline int64_t planeGrain(const PoolWindows &windows) {
  return std::max<int64_t>(1, kExpensiveGrain / std::max<int64_t>(windows.outputPlaneSize(), 1));
}

/// The f32 planes an f16/bf16 result sums into, one per slot; null for an f32 result.
inline float *carvePlanes(const TensorView &result, const PoolWindows &windows,
                          WorkspaceCarver &carver) {
  if (result.dtype == DType::F32)
    return nullptr;
  return carver.take<float>(workspaceSlots(0, windows.planes(), planeGrain(windows)) *
                            windows.inputPlaneSize());
}

inline float *carveMaxPoolGrad(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return nullptr;
  PoolWindows windows(call.inputs[1].shape, call.inputs[0].shape, attributesOf(call));
  return carvePlanes(call.outputs[0], windows, carver);
}

inline float *carveMaxPoolGradArgmax(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return nullptr;
  PoolWindows windows(call.outputs[0].shape, call.inputs[0].shape, attributesOf(call));
  return carvePlanes(call.outputs[0], windows, carver);
}

inline float *carveAvgPoolGrad(const KernelCall &call, WorkspaceCarver &carver) {
  if (call.outputs[0].numElements() == 0)
    return nullptr;
  PoolWindows windows(call.outputs[0].shape, call.inputs[0].shape, attributesOf(call));
  return carvePlanes(call.outputs[0], windows, carver);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_POOLINGBACKWARDWORKSPACE_H
