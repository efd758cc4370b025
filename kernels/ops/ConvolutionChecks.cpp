//===- ConvolutionChecks.cpp - the checks of conv -------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"
#include "kernels/ops/ConvGeometry.h"

namespace memc::kernels {
namespace {

bool checkConv(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 2, 3, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "weight", "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkConvShapes(call.inputs[0], call.inputs[1], call.outputs[0], attributesOf(call),
                       "output", error))
    return false;
  return call.inputs.size() < 3 ||
         (checkDType(call.inputs[2], kFloatTypes, "bias", error) &&
          checkShape(call.inputs[2], {call.inputs[1].shape[0]}, "bias", error));
}

} // namespace

void addConvolutionChecks(OpChecks &table) { table["conv"] = &checkConv; }

} // namespace memc::kernels
