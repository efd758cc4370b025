//===- LossScaleChecks.cpp - the checks of non_finite_check, loss_scale_update ===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkScalarF32(const TensorView &tensor, const std::string &role, std::string &error) {
  return checkDType(tensor, {DType::F32}, role, error) && checkShape(tensor, {}, role, error);
}

/// Inputs: every gradient (any float types and shapes). Output: found_inf, an f32 scalar.
bool checkNonFiniteCheck(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 1, SIZE_MAX, 1, error))
    return false;
  for (size_t i = 0; i < call.inputs.size(); ++i)
    if (!checkDType(call.inputs[i], kFloatTypes, "grad " + std::to_string(i), error))
      return false;
  return checkScalarF32(call.outputs[0], "found_inf", error);
}

/// Inputs: exponent, growth, skipped, found_inf. Outputs: exponent, growth, skipped. All f32
/// scalars; `window` in [1, kMaxLossScaleWindow], `dynamic` a boolean.
bool checkLossScaleUpdate(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 4, 4, 3, error))
    return false;
  const char *inputs[] = {"exponent", "growth", "skipped", "found_inf"};
  for (size_t i = 0; i < 4; ++i)
    if (!checkScalarF32(call.inputs[i], inputs[i], error))
      return false;
  for (size_t i = 0; i < 3; ++i)
    if (!checkScalarF32(call.outputs[i], std::string("new ") + inputs[i], error))
      return false;
  int64_t window;
  bool dynamic;
  const Attributes &attributes = attributesOf(call);
  if (!requireInt(attributes, "window", window, error) ||
      !requireBool(attributes, "dynamic", dynamic, error))
    return false;
  if (window < 1 || window > kMaxLossScaleWindow) {
    error = "window must be in [1, " + std::to_string(kMaxLossScaleWindow) + "], got " +
            std::to_string(window);
    return false;
  }
  return true;
}

} // namespace

void addLossScaleChecks(OpChecks &table) {
  table["non_finite_check"] = &checkNonFiniteCheck;
  table["loss_scale_update"] = &checkLossScaleUpdate;
}

} // namespace memc::kernels
