//===- ReductionChecks.cpp - the checks of reductions ---------------------===//
//
// reduce_sum, reduce_mean, reduce_max.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkReduce(const KernelCall &call, std::string &error) {
  std::vector<int64_t> axes;
  bool keepdims;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kNumericTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         requireInts(attributes, "axes", axes, error) &&
         requireBool(attributes, "keepdims", keepdims, error) &&
         reduceShape(call.inputs[0].shape, axes, keepdims, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

} // namespace

void addReductionChecks(OpChecks &table) {
  table["reduce_sum"] = &checkReduce;
  table["reduce_mean"] = &checkReduce;
  table["reduce_max"] = &checkReduce;
}

} // namespace memc::kernels
