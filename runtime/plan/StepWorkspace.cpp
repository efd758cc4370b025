//===- StepWorkspace.cpp - the scratch a plan step's kernel needs ---------===//
#include "runtime/plan/StepWorkspace.h"

#include "runtime/plan/Plan.pb.h"
#include "runtime/plan/StepCall.h"

namespace memc::runtime {

bool stepWorkspaceBytes(const plan::Plan &plan, const plan::Step &step,
                        const kernels::KernelTable &table, uint64_t &bytes, std::string &error) {
  auto found = table.find(step.kernel());
  if (found == table.end() || !found->second.check) {
    error = "no kernel '" + step.kernel() + "'";
    return false;
  }
  kernels::Attributes attributes;
  kernels::KernelCall call;
  if (!convertStepAttributes(step, attributes, error) ||
      !describeStepCall(plan, step, attributes, call, error))
    return false;
  if (!kernels::checkKernelCall(found->second, call, error)) {
    error = "kernel '" + step.kernel() + "' rejects the call: " + error;
    return false;
  }
  bytes = kernels::workspaceBytes(found->second, call);
  return true;
}

} // namespace memc::runtime
