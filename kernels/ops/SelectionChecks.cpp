//===- SelectionChecks.cpp - the checks of selections ---------------------===//
//
// top_k.
//
//===----------------------------------------------------------------------===//
#include "kernels/ShapeRules.h"
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkTopK(const KernelCall &call, std::string &error) {
  int64_t axis, k;
  bool largest;
  Shape expected;
  const Attributes &attributes = attributesOf(call);
  return checkCall(call, 1, 1, 2, error) &&
         checkDType(call.inputs[0], kNumericTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "values", "input", error) &&
         checkDType(call.outputs[1], {DType::I64}, "indices", error) &&
         requireInt(attributes, "axis", axis, error) && requireInt(attributes, "k", k, error) &&
         requireBool(attributes, "largest", largest, error) &&
         topKShape(call.inputs[0].shape, axis, k, expected, error) &&
         checkShape(call.outputs[0], expected, "values", error) &&
         checkShape(call.outputs[1], expected, "indices", error);
}

} // namespace

void addSelectionChecks(OpChecks &table) { table["top_k"] = &checkTopK; }

} // namespace memc::kernels
