//===- StepWorkspace.h - the scratch a plan step's kernel needs -*- C++ -*-===//
//
// Kernel scratch is planned like any value (kernels/Kernel.h): the compiler asks the plan
// target's contracts (kernels/KernelTargets.h) how many bytes each step needs, as a compiler
// asks cuDNN for a convolution's workspace size, and places an arena buffer of that size live
// at the step. The loader asks the device's kernel table, which has the same rules, to check
// the plan's answer.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_STEPWORKSPACE_H
#define MEMC_RUNTIME_PLAN_STEPWORKSPACE_H

#include "kernels/Kernel.h"

#include <cstdint>
#include <string>

namespace memc::plan {
class Plan;
class Step;
} // namespace memc::plan

namespace memc::runtime {

/// The workspace bytes `step` of `plan` needs from its kernel in `table` (a target's contracts or
/// a device's kernels; 0 when the kernel has no workspace entry). False with a message when the
/// kernel is unknown, the step's buffers or attributes are malformed, or the kernel's check rejects
/// the call (workspace entries may assume check passed).
bool stepWorkspaceBytes(const plan::Plan &plan, const plan::Step &step,
                        const kernels::KernelTable &table, uint64_t &bytes, std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_STEPWORKSPACE_H
