//===- ConvolutionBackwardChecks.cpp - the checks of convolution gradients ===//
//
// conv_grad_input, conv_grad_weight.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"
#include "kernels/ops/ConvGeometry.h"

namespace memc::kernels {
namespace {

// conv_grad_input(grad, weight) -> result, the forward input's type.
bool checkConvGradInput(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkSameDType(call.inputs[1], call.inputs[0], "weight", "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         checkConvShapes(call.outputs[0], call.inputs[1], call.inputs[0], attributesOf(call),
                         "grad", error);
}

// conv_grad_weight(grad, input) -> result, the weight's type.
bool checkConvGradWeight(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkSameDType(call.inputs[1], call.inputs[0], "input", "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         checkConvShapes(call.inputs[1], call.outputs[0], call.inputs[0], attributesOf(call),
                         "grad", error);
}

} // namespace

void addConvolutionBackwardChecks(OpChecks &table) {
  table["conv_grad_input"] = &checkConvGradInput;
  table["conv_grad_weight"] = &checkConvGradWeight;
}

} // namespace memc::kernels
