//===- AttentionChecks.cpp - the checks of attention ---------------------===//
//
// flash_attention, flash_attention_grad: both check their query, key, value and mask the same
// way (checkAttentionOperands, CallChecks.h) against the one shape rule.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

/// (query, key, value[, mask][, salt]) -> (output, logsumexp).
bool checkFlashAttention(const KernelCall &call, std::string &error) {
  Shape output, logsumexp;
  return checkCall(call, 3, 5, 2, error) &&
         checkAttentionOperands(call, 0, 3, output, logsumexp, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "query", error) &&
         checkShape(call.outputs[0], output, "output", error) &&
         checkDType(call.outputs[1], {DType::F32}, "logsumexp", error) &&
         checkShape(call.outputs[1], logsumexp, "logsumexp", error);
}

/// (grad, query, key, value, output, logsumexp[, mask][, salt]) -> (query_grad, key_grad,
/// value_grad).
bool checkFlashAttentionGrad(const KernelCall &call, std::string &error) {
  Shape output, logsumexp;
  if (!checkCall(call, 6, 8, 3, error) ||
      !checkAttentionOperands(call, 1, 6, output, logsumexp, error))
    return false;
  const TensorView &query = call.inputs[1];
  return checkSameDType(call.inputs[0], query, "grad", "query", error) &&
         checkShape(call.inputs[0], output, "grad", error) &&
         checkSameDType(call.inputs[4], query, "output", "query", error) &&
         checkShape(call.inputs[4], output, "output", error) &&
         checkDType(call.inputs[5], {DType::F32}, "logsumexp", error) &&
         checkShape(call.inputs[5], logsumexp, "logsumexp", error) &&
         checkSameDType(call.outputs[0], query, "query_grad", "query", error) &&
         checkShape(call.outputs[0], query.shape, "query_grad", error) &&
         checkSameDType(call.outputs[1], query, "key_grad", "query", error) &&
         checkShape(call.outputs[1], call.inputs[2].shape, "key_grad", error) &&
         checkSameDType(call.outputs[2], query, "value_grad", "query", error) &&
         checkShape(call.outputs[2], call.inputs[3].shape, "value_grad", error);
}

} // namespace

void addAttentionChecks(OpChecks &table) {
  table["flash_attention"] = &checkFlashAttention;
  table["flash_attention_grad"] = &checkFlashAttentionGrad;
}

} // namespace memc::kernels
