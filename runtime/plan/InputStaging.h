//===- InputStaging.h - a second place on the device for each input -*- C++ -*-===//
//
// A GPU computes one micro-batch while the next is copied in over PCIe: its inputs must land
// somewhere the running step does not read. A plan for such a target (kernels/Target.h,
// stagesInputs) gives each graph input a staging buffer in the persistent region
// (Binding.staging): the executor uploads the next micro-batch there on its copy stream and,
// before the run's first kernel, copies it on the device into the input's arena buffer. The
// staging buffers are part of persistent_bytes, so the budget and the report count them.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_PLAN_INPUTSTAGING_H
#define MEMC_RUNTIME_PLAN_INPUTSTAGING_H

#include "runtime/plan/Plan.pb.h"

namespace memc::plan {

/// Gives every input of `plan` without one a staging buffer (category INPUTS, named after the
/// input), placed after the persistent region's buffers at plan.alignment(), and grows
/// persistent_bytes to hold them.
void addInputStaging(Plan &plan);

} // namespace memc::plan

#endif // MEMC_RUNTIME_PLAN_INPUTSTAGING_H
