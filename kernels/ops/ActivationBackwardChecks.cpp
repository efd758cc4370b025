//===- ActivationBackwardChecks.cpp - the checks of activation gradients --===//
//
// gelu_grad, softmax_grad, log_softmax_grad.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

/// (grad, operand) -> result, all of one float type and shape.
bool checkGradAndOperand(const KernelCall &call, const char *operand, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkSameDType(call.inputs[1], call.inputs[0], operand, "grad", error) &&
         checkShape(call.inputs[1], call.inputs[0].shape, operand, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "result", error);
}

bool checkGeluGrad(const KernelCall &call, std::string &error) {
  return checkGradAndOperand(call, "input", error) &&
         checkGeluApproximate(attributesOf(call), error);
}

bool checkSoftmaxGrad(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkGradAndOperand(call, "output", error) ||
      !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  return checkAxisInRange(axis, call.inputs[0], error);
}

} // namespace

void addActivationBackwardChecks(OpChecks &table) {
  table["gelu_grad"] = &checkGeluGrad;
  table["softmax_grad"] = &checkSoftmaxGrad;
  table["log_softmax_grad"] = &checkSoftmaxGrad;
}

} // namespace memc::kernels
