//===- PoolingChecks.cpp - the checks of max_pool(_with_argmax), avg_pool -===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"
#include "kernels/ops/PoolWindowChecks.h"

namespace memc::kernels {
namespace {

template <bool Average> bool checkPool(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkRankAtLeast(call.inputs[0], 3, "input", error) &&
         checkPoolWindows(call.inputs[0], call.outputs[0], Average, attributesOf(call), "output",
                          error);
}

// max_pool_with_argmax(input) -> (output, argmax): max_pool's output and its u8 window taps.
bool checkMaxPoolWithArgmax(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 2, error, {DType::U8}) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkRankAtLeast(call.inputs[0], 3, "input", error) &&
         checkArgmaxPoolWindows(call.inputs[0], call.outputs[0], call.outputs[1],
                                attributesOf(call), "output", "argmax", error);
}

} // namespace

void addPoolingChecks(OpChecks &table) {
  table["max_pool"] = &checkPool<false>;
  table["max_pool_with_argmax"] = &checkMaxPoolWithArgmax;
  table["avg_pool"] = &checkPool<true>;
}

} // namespace memc::kernels
