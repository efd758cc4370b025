//===- ReductionChecks.cpp - the checks of reductions ---------------------===//
//
// reduce_sum, reduce_mean, reduce_max, reduce_prod (numeric); reduce_l2, reduce_log_sum_exp (float).
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

template <bool FloatOnly> bool checkReduce(const KernelCall &call, std::string &error) {
  std::vector<int64_t> axes;
  bool keepdims;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], FloatOnly ? kFloatTypes : kNumericTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         requireInts(attributes, "axes", axes, error) &&
         requireBool(attributes, "keepdims", keepdims, error) &&
         reduceShape(call.inputs[0].shape, axes, keepdims, expected, error) &&
         checkShape(call.outputs[0], expected, "output", error);
}

} // namespace

void addReductionChecks(OpChecks &table) {
  table["reduce_sum"] = &checkReduce<false>;
  table["reduce_mean"] = &checkReduce<false>;
  table["reduce_max"] = &checkReduce<false>;
  table["reduce_prod"] = &checkReduce<false>;
  table["reduce_l2"] = &checkReduce<true>;
  table["reduce_log_sum_exp"] = &checkReduce<true>;
}

} // namespace memc::kernels
