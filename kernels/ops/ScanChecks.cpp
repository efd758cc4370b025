//===- ScanChecks.cpp - the checks of scans -------------------------------===//
//
// cumsum.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkCumSum(const KernelCall &call, std::string &error) {
  int64_t axis;
  bool exclusive, reverse;
  const Attributes &attributes = attributesOf(call);
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kNumericTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "output", error) &&
         requireInt(attributes, "axis", axis, error) &&
         checkAxisInRange(axis, call.inputs[0], error) &&
         requireBool(attributes, "exclusive", exclusive, error) &&
         requireBool(attributes, "reverse", reverse, error);
}

} // namespace

void addScanChecks(OpChecks &table) { table["cumsum"] = &checkCumSum; }

} // namespace memc::kernels
