//===- CpuWorkspaces.h - the CPU target's workspace rules -------*- C++ -*-===//
//
// The scratch each CPU kernel needs, as a pure function of the call (Kernel.h). The rules walk
// the same layouts the run functions carve (the *Workspace.h headers here), but are built
// without the kernels, OpenBLAS or the thread pool: the compiler links them (through
// KernelTargets.h) to plan a CPU program's workspace, and the loader re-checks plans with the
// same rules through the CPU kernel table.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CPUWORKSPACES_H
#define MEMC_KERNELS_CPU_CPUWORKSPACES_H

#include "kernels/KernelTargets.h"

namespace memc::kernels {

/// Kernels that need scratch on the CPU, with their rule; the others need none.
const WorkspaceRules &cpuWorkspaceRules();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CPUWORKSPACES_H
