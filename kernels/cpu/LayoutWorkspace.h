//===- LayoutWorkspace.h - the CPU workspace of gather -----------*- C++ -*-===//
//
// The scratch layout of gather: what the run functions carve from call.workspace
// and what the CPU workspace rules (CpuTarget.cpp) size, one walk for both (Workspace.h).
// Free of OpenBLAS and threads, so the compiler sizes CPU plans without the kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_LAYOUTWORKSPACE_H
#define MEMC_KERNELS_CPU_LAYOUTWORKSPACE_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/WorkspaceSlots.h"

#include <algorithm>
#include <cstdint>

namespace memc::kernels {

/// The indices, validated and made non-negative.
inline int64_t *carveGather(const KernelCall &call, WorkspaceCarver &carver) {
  return carver.take<int64_t>(call.inputs[1].numElements());
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_LAYOUTWORKSPACE_H
