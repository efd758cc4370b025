//===- PoolingBackwardChecks.cpp - the checks of pooling gradients --------===//
//
// max_pool_grad, max_pool_grad_argmax, avg_pool_grad.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"
#include "kernels/ops/PoolWindowChecks.h"

namespace memc::kernels {
namespace {

// max_pool_grad(grad, input) -> result: the grad may have its own float type.
bool checkMaxPoolGrad(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 2, 2, 1, error))
    return false;
  const TensorView &grad = call.inputs[0], &input = call.inputs[1];
  return checkDType(grad, kFloatTypes, "grad", error) &&
         checkDType(input, kFloatTypes, "input", error) &&
         checkRankAtLeast(input, 3, "input", error) &&
         checkSameDType(call.outputs[0], input, "result", "input", error) &&
         checkShape(call.outputs[0], input.shape, "result", error) &&
         checkPoolWindows(input, grad, false, attributesOf(call), "grad", error);
}

// max_pool_grad_argmax(grad, argmax) -> result, the forward input's shape and float type.
bool checkMaxPoolGradArgmax(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 2, 2, 1, error, {DType::U8}))
    return false;
  const TensorView &grad = call.inputs[0], &result = call.outputs[0];
  return checkDType(grad, kFloatTypes, "grad", error) &&
         checkDType(result, kFloatTypes, "result", error) &&
         checkRankAtLeast(result, 3, "result", error) &&
         checkArgmaxPoolWindows(result, grad, call.inputs[1], attributesOf(call), "grad",
                                "argmax", error);
}

// avg_pool_grad(grad) -> result, the forward input's shape.
bool checkAvgPoolGrad(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "grad", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "result", "grad", error) &&
         checkRankAtLeast(call.outputs[0], 3, "result", error) &&
         checkPoolWindows(call.outputs[0], call.inputs[0], true, attributesOf(call), "grad", error);
}

} // namespace

void addPoolingBackwardChecks(OpChecks &table) {
  table["max_pool_grad"] = &checkMaxPoolGrad;
  table["max_pool_grad_argmax"] = &checkMaxPoolGradArgmax;
  table["avg_pool_grad"] = &checkAvgPoolGrad;
}

} // namespace memc::kernels
