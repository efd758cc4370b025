//===- LossChecks.cpp - the checks of cross_entropy, cross_entropy_grad ---===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

/// logits [..., C] float, labels [...] integer, and the ignore_index attribute.
bool checkLogitsAndLabels(const TensorView &logits, const TensorView &labels,
                          const Attributes &attributes, std::string &error) {
  int64_t ignoreIndex;
  return checkDType(logits, kFloatTypes, "logits", error) &&
         checkRankAtLeast(logits, 1, "logits", error) &&
         checkDType(labels, kIndexTypes, "labels", error) &&
         checkShape(labels, Shape(logits.shape.begin(), logits.shape.end() - 1), "labels", error) &&
         requireInt(attributes, "ignore_index", ignoreIndex, error);
}

// cross_entropy(logits, labels) -> f32 scalar.
bool checkCrossEntropy(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkLogitsAndLabels(call.inputs[0], call.inputs[1], attributesOf(call), error) &&
         checkDType(call.outputs[0], {DType::F32}, "loss", error) &&
         checkShape(call.outputs[0], {}, "loss", error);
}

// cross_entropy_grad(grad, logits, labels) -> logits' type.
bool checkCrossEntropyGrad(const KernelCall &call, std::string &error) {
  return checkCall(call, 3, 3, 1, error) &&
         checkDType(call.inputs[0], {DType::F32}, "grad", error) &&
         checkShape(call.inputs[0], {}, "grad", error) &&
         checkLogitsAndLabels(call.inputs[1], call.inputs[2], attributesOf(call), error) &&
         checkSameDType(call.outputs[0], call.inputs[1], "result", "logits", error) &&
         checkShape(call.outputs[0], call.inputs[1].shape, "result", error);
}

} // namespace

void addLossChecks(OpChecks &table) {
  table["cross_entropy"] = &checkCrossEntropy;
  table["cross_entropy_grad"] = &checkCrossEntropyGrad;
}

} // namespace memc::kernels
