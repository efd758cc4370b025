//===- CpuTarget.h - the CPU target's record --------------------*- C++ -*-===//
//
// Every op, with the scratch each CPU kernel needs as a pure function of the call (Kernel.h).
// The rules walk the same layouts the run functions carve (the *Workspace.h headers here), but
// are built without the kernels, OpenBLAS or the thread pool: the compiler links them (through
// KernelTargets.h) to plan a CPU program's workspace, and the loader re-checks plans with the
// same rules through the CPU kernel table. The convolution and matmul rules ask oneDNN for the
// sizes of the primitives the kernels would run.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CPUTARGET_H
#define MEMC_KERNELS_CPU_CPUTARGET_H

#include "kernels/Target.h"

namespace memc::kernels {

/// The CPU device's target name (runtime/device/cpu/).
inline constexpr const char *kCpuTarget = "cpu";

/// "cpu": every op with a shared check, the CPU's workspace rules, no limits of its own.
const Target &cpuTarget();

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CPUTARGET_H
