//===- IndexingBackwardChecks.cpp - the checks of gather_grad, slice_grad -===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

// gather_grad(grad, indices) -> result: result is the gathered-from tensor's type.
bool checkGatherGrad(const KernelCall &call, std::string &error) {
  int64_t axis;
  Shape expected;
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkDType(call.inputs[1], kIndexTypes, "indices", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         requireInt(attributesOf(call), "axis", axis, error) &&
         gatherShape(call.outputs[0].shape, call.inputs[1].shape, axis, expected, error) &&
         checkShape(call.inputs[0], expected, "grad", error);
}

// slice_grad(grad) -> result: result is the sliced tensor's type.
bool checkSliceGrad(const KernelCall &call, std::string &error) {
  std::vector<int64_t> starts, limits, steps;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  return checkCall(call, 1, 1, 1, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         requireInts(attributes, "starts", starts, error) &&
         requireInts(attributes, "limits", limits, error) &&
         requireInts(attributes, "steps", steps, error) &&
         sliceShape(call.outputs[0].shape, starts, limits, steps, expected, error) &&
         checkShape(call.inputs[0], expected, "grad", error);
}

} // namespace

void addIndexingBackwardChecks(OpChecks &table) {
  table["gather_grad"] = &checkGatherGrad;
  table["slice_grad"] = &checkSliceGrad;
}

} // namespace memc::kernels
