//===- ActivationBackwardChecks.cpp - the checks of activation gradients --===//
//
// gelu_grad, bias_gelu_grad, softmax_grad, log_softmax_grad.
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

/// (grad, input, bias) -> result: gelu_grad's operands and a bias of the last dimension.
bool checkBiasGeluGrad(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 3, 3, 1, error))
    return false;
  KernelCall gradAndInput = call;
  gradAndInput.inputs.pop_back();
  return checkGeluGrad(gradAndInput, error) &&
         checkDType(call.inputs[2], kFloatTypes, "bias", error) &&
         lastAxisBiasShape(call.inputs[1].shape, call.inputs[2].shape, error);
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
  table["bias_gelu_grad"] = &checkBiasGeluGrad;
  table["softmax_grad"] = &checkSoftmaxGrad;
  table["log_softmax_grad"] = &checkSoftmaxGrad;
}

} // namespace memc::kernels
