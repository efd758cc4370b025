//===- KernelTargets.h - what the compiler knows of each target -*- C++ -*-===//
//
// A target is a kind of device a plan is compiled for (Plan.target; a device loads only plans
// for its own name). The compiler needs two things per step from the target, both without the
// target's kernels: the op's check (shared by every target, kernels/ops/OpContracts.h) and the
// target's workspace rule. targetContracts() is that table; a device's kernel table is the same
// entries with its run functions added (kernels/cpu/CpuKernels.cpp), so the compiler and the
// loader size workspace by the same rules.
//
// A new target adds its rules (kernels/<target>/<Target>Workspaces.cpp, in this BLAS-free
// library) and one row of kTargets in KernelTargets.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_KERNELTARGETS_H
#define MEMC_KERNELS_KERNELTARGETS_H

#include "kernels/Kernel.h"

#include <map>
#include <string>

namespace memc::kernels {

/// The target of the CPU device (runtime/device/cpu/).
inline constexpr const char *kCpuTarget = "cpu";

/// One target's workspace rules, by kernel name; a kernel without a rule needs none.
using WorkspaceRules = std::map<std::string, KernelWorkspace>;

/// Every op's check and `target`'s workspace rule, by kernel name, with no run functions; null
/// for a target memc cannot compile for.
const KernelTable *targetContracts(const std::string &target);

/// "cpu": the targets targetContracts knows, for messages.
std::string targetNames();

} // namespace memc::kernels

#endif // MEMC_KERNELS_KERNELTARGETS_H
