//===- NormalizationBackwardChecks.cpp - the checks of normalization gradients ===//
//
// layer_norm_grad, batch_norm_grad, rms_norm_grad.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

/// (grad, input, scale) -> (input_grad, scale_grad[, bias_grad]) with `outputs` results: grad,
/// input and input_grad of one float type and shape, scale and its gradients of one float type
/// and `scaleShape`.
bool checkNormGradCall(const KernelCall &call, size_t outputs, std::string &error) {
  return checkCall(call, 3, 3, outputs, error) &&
         checkDType(call.inputs[1], kFloatTypes, "input", error) &&
         checkSameDType(call.inputs[0], call.inputs[1], "grad", "input", error) &&
         checkShape(call.inputs[0], call.inputs[1].shape, "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[1], "input_grad", "input", error) &&
         checkShape(call.outputs[0], call.inputs[1].shape, "input_grad", error) &&
         checkDType(call.inputs[2], kFloatTypes, "scale", error) &&
         checkEpsilon(attributesOf(call), error);
}

bool checkScaleShapes(const KernelCall &call, const Shape &scaleShape, std::string &error) {
  return checkShape(call.inputs[2], scaleShape, "scale", error) &&
         checkSameDType(call.outputs[1], call.inputs[2], "scale_grad", "scale", error) &&
         checkShape(call.outputs[1], scaleShape, "scale_grad", error) &&
         (call.outputs.size() < 3 ||
          (checkSameDType(call.outputs[2], call.inputs[2], "bias_grad", "scale", error) &&
           checkShape(call.outputs[2], scaleShape, "bias_grad", error)));
}

bool checkLayerNormGrad(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkNormGradCall(call, 3, error) || !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  if (!checkAxisInRange(axis, call.inputs[1], error))
    return false;
  const Shape &shape = call.inputs[1].shape;
  return checkScaleShapes(call, Shape(shape.begin() + axis, shape.end()), error);
}

bool checkBatchNormGrad(const KernelCall &call, std::string &error) {
  return checkNormGradCall(call, 3, error) &&
         checkRankAtLeast(call.inputs[1], 2, "input", error) &&
         checkScaleShapes(call, {call.inputs[1].shape[1]}, error);
}

bool checkRmsNormGrad(const KernelCall &call, std::string &error) {
  int64_t axis;
  return checkNormGradCall(call, 2, error) &&
         requireInt(attributesOf(call), "axis", axis, error) &&
         rmsNormShape(call.inputs[1].shape, axis, call.inputs[2].shape, error) &&
         checkScaleShapes(call, call.inputs[2].shape, error);
}

} // namespace

void addNormalizationBackwardChecks(OpChecks &table) {
  table["layer_norm_grad"] = &checkLayerNormGrad;
  table["batch_norm_grad"] = &checkBatchNormGrad;
  table["rms_norm_grad"] = &checkRmsNormGrad;
}

} // namespace memc::kernels
