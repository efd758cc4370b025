//===- NormalizationChecks.cpp - the checks of normalizations -------------===//
//
// softmax, log_softmax, layer_norm, add_layer_norm, rms_norm, batch_norm.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkSoftmax(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkCall(call, 1, 1, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !requireInt(attributesOf(call), "axis", axis, error))
    return false;
  return checkAxisInRange(axis, call.inputs[0], error);
}

bool checkLayerNorm(const KernelCall &call, std::string &error) {
  int64_t axis;
  if (!checkCall(call, 2, 3, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !requireInt(attributesOf(call), "axis", axis, error) ||
      !checkEpsilon(attributesOf(call), error))
    return false;
  if (!checkAxisInRange(axis, call.inputs[0], error))
    return false;
  const Shape &shape = call.inputs[0].shape;
  Shape normalized(shape.begin() + axis, shape.end());
  const char *roles[] = {"input", "scale", "bias"};
  for (size_t i = 1; i < call.inputs.size(); ++i)
    if (!checkDType(call.inputs[i], kFloatTypes, roles[i], error) ||
        !checkShape(call.inputs[i], normalized, roles[i], error))
      return false;
  return true;
}

/// (lhs, rhs, scale[, bias]) -> (sum, output): an add of two tensors of one type and shape, then
/// layer_norm's check on the sum.
bool checkAddLayerNorm(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 3, 4, 2, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "lhs", error) ||
      !checkSameDType(call.inputs[1], call.inputs[0], "rhs", "lhs", error) ||
      !checkShape(call.inputs[1], call.inputs[0].shape, "rhs", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "sum", "lhs", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "sum", error))
    return false;
  KernelCall norm = call;
  norm.inputs.erase(norm.inputs.begin() + 1);
  norm.inputs[0] = call.outputs[0];
  norm.outputs = {call.outputs[1]};
  return checkLayerNorm(norm, error);
}

bool checkRmsNorm(const KernelCall &call, std::string &error) {
  int64_t axis;
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkDType(call.inputs[1], kFloatTypes, "scale", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "output", error) &&
         requireInt(attributesOf(call), "axis", axis, error) &&
         checkEpsilon(attributesOf(call), error) &&
         rmsNormShape(call.inputs[0].shape, axis, call.inputs[1].shape, error);
}

bool checkBatchNorm(const KernelCall &call, std::string &error) {
  double momentum;
  bool training;
  const Attributes &attributes = attributesOf(call);
  if (!checkCall(call, 5, 5, 1, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkRankAtLeast(call.inputs[0], 2, "input", error) ||
      !checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) ||
      !checkShape(call.outputs[0], call.inputs[0].shape, "output", error) ||
      !checkEpsilon(attributes, error) || !requireFloat(attributes, "momentum", momentum, error) ||
      !requireBool(attributes, "training", training, error))
    return false;
  const char *roles[] = {"input", "scale", "bias", "mean", "var"};
  for (size_t i = 1; i < 5; ++i)
    if (!checkDType(call.inputs[i], kFloatTypes, roles[i], error) ||
        !checkShape(call.inputs[i], {call.inputs[0].shape[1]}, roles[i], error))
      return false;
  return true;
}

bool checkBatchMoments(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 1, 1, 2, error) ||
      !checkDType(call.inputs[0], kFloatTypes, "input", error) ||
      !checkRankAtLeast(call.inputs[0], 2, "input", error))
    return false;
  const char *roles[] = {"mean", "variance"};
  for (size_t i = 0; i < 2; ++i)
    if (!checkDType(call.outputs[i], kFloatTypes, roles[i], error) ||
        !checkShape(call.outputs[i], {call.inputs[0].shape[1]}, roles[i], error))
      return false;
  return true;
}

} // namespace

void addNormalizationChecks(OpChecks &table) {
  table["softmax"] = &checkSoftmax;
  table["log_softmax"] = &checkSoftmax;
  table["layer_norm"] = &checkLayerNorm;
  table["add_layer_norm"] = &checkAddLayerNorm;
  table["rms_norm"] = &checkRmsNorm;
  table["batch_norm"] = &checkBatchNorm;
  table["batch_moments"] = &checkBatchMoments;
}

} // namespace memc::kernels
