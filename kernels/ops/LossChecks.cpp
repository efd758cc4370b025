//===- LossChecks.cpp - the checks of the cross-entropy kernels ----------===//
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

/// hidden [..., D] float, weight [D, V] or [V, D] and the optional bias [V] (null when absent)
/// of its type, labels [...] integer, the attributes, and the logsumexp's shape (labels').
bool checkHeadAndLabels(const TensorView &hidden, const TensorView &weight, const TensorView *bias,
                        const TensorView &labels, const Attributes &attributes,
                        Shape &logsumexp, std::string &error) {
  int64_t ignoreIndex, classes;
  bool transposeWeight = false;
  return checkDType(hidden, kFloatTypes, "hidden", error) &&
         checkSameDType(weight, hidden, "weight", "hidden", error) &&
         (!bias || checkSameDType(*bias, hidden, "bias", "hidden", error)) &&
         checkDType(labels, kIndexTypes, "labels", error) &&
         requireInt(attributes, "ignore_index", ignoreIndex, error) &&
         (!attributes.has("transpose_weight") ||
          requireBool(attributes, "transpose_weight", transposeWeight, error)) &&
         linearCrossEntropyShape(hidden.shape, weight.shape, transposeWeight,
                                 bias ? &bias->shape : nullptr, labels.shape, logsumexp, classes,
                                 error);
}

/// The input at `index`, or null where the call has fewer.
const TensorView *optionalInput(const KernelCall &call, size_t index) {
  return index < call.inputs.size() ? &call.inputs[index] : nullptr;
}

// linear_cross_entropy(hidden, weight, labels[, bias]) -> f32 scalar loss, f32 logsumexp.
bool checkLinearCrossEntropy(const KernelCall &call, std::string &error) {
  Shape logsumexp;
  return checkCall(call, 3, 4, 2, error) &&
         checkHeadAndLabels(call.inputs[0], call.inputs[1], optionalInput(call, 3),
                            call.inputs[2], attributesOf(call), logsumexp, error) &&
         checkDType(call.outputs[0], {DType::F32}, "loss", error) &&
         checkShape(call.outputs[0], {}, "loss", error) &&
         checkDType(call.outputs[1], {DType::F32}, "logsumexp", error) &&
         checkShape(call.outputs[1], logsumexp, "logsumexp", error);
}

// linear_cross_entropy_grad(grad, hidden, weight, labels, logsumexp[, bias]) -> hidden's and
// weight's types (and the bias's).
bool checkLinearCrossEntropyGrad(const KernelCall &call, std::string &error) {
  Shape logsumexp;
  const TensorView *bias = optionalInput(call, 5);
  return checkCall(call, 5, 6, bias ? 3 : 2, error) &&
         checkDType(call.inputs[0], {DType::F32}, "grad", error) &&
         checkShape(call.inputs[0], {}, "grad", error) &&
         checkHeadAndLabels(call.inputs[1], call.inputs[2], bias, call.inputs[3],
                            attributesOf(call), logsumexp, error) &&
         checkDType(call.inputs[4], {DType::F32}, "logsumexp", error) &&
         checkShape(call.inputs[4], logsumexp, "logsumexp", error) &&
         checkSameDType(call.outputs[0], call.inputs[1], "hidden_grad", "hidden", error) &&
         checkShape(call.outputs[0], call.inputs[1].shape, "hidden_grad", error) &&
         checkSameDType(call.outputs[1], call.inputs[2], "weight_grad", "weight", error) &&
         checkShape(call.outputs[1], call.inputs[2].shape, "weight_grad", error) &&
         (!bias || (checkSameDType(call.outputs[2], *bias, "bias_grad", "bias", error) &&
                    checkShape(call.outputs[2], bias->shape, "bias_grad", error)));
}

} // namespace

void addLossChecks(OpChecks &table) {
  table["cross_entropy"] = &checkCrossEntropy;
  table["cross_entropy_grad"] = &checkCrossEntropyGrad;
  table["linear_cross_entropy"] = &checkLinearCrossEntropy;
  table["linear_cross_entropy_grad"] = &checkLinearCrossEntropyGrad;
}

} // namespace memc::kernels
