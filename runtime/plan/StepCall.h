//===- StepCall.h - a plan step as a kernel call without data ---*- C++ -*-===//
//
// The loader asks a step's kernel to check the call and to size its workspace before any
// memory exists, and the compiler asks the same while it builds the plan: both describe the
// step as a KernelCall whose tensors have the buffers' dtypes and shapes and no data. This is
// the one place that turns plan steps into such calls.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_STEPCALL_H
#define MEMC_RUNTIME_PLAN_STEPCALL_H

#include "kernels/Kernel.h"

#include <string>

namespace memc::plan {
class Plan;
class Step;
} // namespace memc::plan

namespace memc::runtime {

/// The step's attributes as the kernels see them; false with a message (without the step's
/// name) on a nameless, repeated or valueless attribute.
bool convertStepAttributes(const plan::Step &step, kernels::Attributes &attributes,
                           std::string &error);

/// `call`'s inputs and outputs: views without data of the step's buffers in `plan`, and
/// `attributes` (which must outlive the call). False with a message (without the step's name)
/// on a buffer index out of range or an unknown dtype.
bool describeStepCall(const plan::Plan &plan, const plan::Step &step,
                      const kernels::Attributes &attributes, kernels::KernelCall &call,
                      std::string &error);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_PLAN_STEPCALL_H
