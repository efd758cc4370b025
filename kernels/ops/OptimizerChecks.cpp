//===- OptimizerChecks.cpp - the checks of sgd_update, adamw_update -------===//
#include "kernels/DynamicQuantization.h"
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

namespace memc::kernels {
namespace {

bool checkScalarF32(const TensorView &tensor, const std::string &role, std::string &error) {
  return checkDType(tensor, {DType::F32}, role, error) && checkShape(tensor, {}, role, error);
}

/// Inputs: param, grad, velocity, lr. Outputs: param, velocity.
bool checkSgd(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 4, 5, 2, error) ||
      (call.inputs.size() == 5 && !checkScalarF32(call.inputs[4], "gate", error)))
    return false;
  const TensorView &param = call.inputs[0];
  double momentum, decay;
  bool nesterov;
  const Attributes &attributes = attributesOf(call);
  return checkDType(param, kFloatTypes, "param", error) &&
         checkSameDType(call.inputs[1], param, "grad", "param", error) &&
         checkShape(call.inputs[1], param.shape, "grad", error) &&
         checkSameDType(call.inputs[2], param, "velocity", "param", error) &&
         checkShape(call.inputs[2], param.shape, "velocity", error) &&
         checkScalarF32(call.inputs[3], "lr", error) &&
         checkSameDType(call.outputs[0], param, "new param", "param", error) &&
         checkShape(call.outputs[0], param.shape, "new param", error) &&
         checkSameDType(call.outputs[1], param, "new velocity", "param", error) &&
         checkShape(call.outputs[1], param.shape, "new velocity", error) &&
         requireFloat(attributes, "momentum", momentum, error) &&
         requireFloat(attributes, "weight_decay", decay, error) &&
         requireBool(attributes, "nesterov", nesterov, error);
}

/// Inputs: param, grad, exp_avg, exp_avg_sq, lr, step. Outputs: param, exp_avg, exp_avg_sq.
bool checkAdamW(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 6, 7, 3, error) ||
      (call.inputs.size() == 7 && !checkScalarF32(call.inputs[6], "gate", error)))
    return false;
  const TensorView &param = call.inputs[0];
  const Attributes &attributes = attributesOf(call);
  double beta1, beta2, eps, decay;
  return checkDType(param, kFloatTypes, "param", error) &&
         checkSameDType(call.inputs[1], param, "grad", "param", error) &&
         checkShape(call.inputs[1], param.shape, "grad", error) &&
         checkDType(call.inputs[2], {DType::F32}, "exp_avg", error) &&
         checkShape(call.inputs[2], param.shape, "exp_avg", error) &&
         checkDType(call.inputs[3], {DType::F32}, "exp_avg_sq", error) &&
         checkShape(call.inputs[3], param.shape, "exp_avg_sq", error) &&
         checkScalarF32(call.inputs[4], "lr", error) &&
         checkScalarF32(call.inputs[5], "step", error) &&
         checkSameDType(call.outputs[0], param, "new param", "param", error) &&
         checkShape(call.outputs[0], param.shape, "new param", error) &&
         checkDType(call.outputs[1], {DType::F32}, "new exp_avg", error) &&
         checkShape(call.outputs[1], param.shape, "new exp_avg", error) &&
         checkDType(call.outputs[2], {DType::F32}, "new exp_avg_sq", error) &&
         checkShape(call.outputs[2], param.shape, "new exp_avg_sq", error) &&
         requireFloat(attributes, "beta1", beta1, error) &&
         requireFloat(attributes, "beta2", beta2, error) &&
         requireFloat(attributes, "eps", eps, error) &&
         requireFloat(attributes, "weight_decay", decay, error);
}

/// Inputs: param, grad, exp_avg and exp_avg_sq (u8 code indices, the param's shape), their
/// absmax (f32, one per block), lr, step, optionally the gate. Outputs: param, the four states.
bool checkAdamW8bit(const KernelCall &call, std::string &error) {
  if (!checkCall(call, 8, 9, 5, error, {DType::U8}) ||
      (call.inputs.size() == 9 && !checkScalarF32(call.inputs[8], "gate", error)))
    return false;
  const TensorView &param = call.inputs[0];
  const Attributes &attributes = attributesOf(call);
  const Shape blocks = {(param.numElements() + kQuantizationBlock - 1) / kQuantizationBlock};
  double beta1, beta2, eps, decay;
  const char *states[] = {"exp_avg", "exp_avg_sq", "exp_avg absmax", "exp_avg_sq absmax"};
  for (int s = 0; s < 4; ++s) {
    const bool codes = s < 2;
    std::string name = states[s];
    if (!checkDType(call.inputs[2 + s], {codes ? DType::U8 : DType::F32}, name, error) ||
        !checkShape(call.inputs[2 + s], codes ? param.shape : blocks, name, error) ||
        !checkDType(call.outputs[1 + s], {codes ? DType::U8 : DType::F32}, "new " + name,
                    error) ||
        !checkShape(call.outputs[1 + s], codes ? param.shape : blocks, "new " + name, error))
      return false;
  }
  return checkDType(param, kFloatTypes, "param", error) &&
         checkSameDType(call.inputs[1], param, "grad", "param", error) &&
         checkShape(call.inputs[1], param.shape, "grad", error) &&
         checkScalarF32(call.inputs[6], "lr", error) &&
         checkScalarF32(call.inputs[7], "step", error) &&
         checkSameDType(call.outputs[0], param, "new param", "param", error) &&
         checkShape(call.outputs[0], param.shape, "new param", error) &&
         requireFloat(attributes, "beta1", beta1, error) &&
         requireFloat(attributes, "beta2", beta2, error) &&
         requireFloat(attributes, "eps", eps, error) &&
         requireFloat(attributes, "weight_decay", decay, error);
}

} // namespace

void addOptimizerChecks(OpChecks &table) {
  table["sgd_update"] = &checkSgd;
  table["adamw_update"] = &checkAdamW;
  table["adamw8bit_update"] = &checkAdamW8bit;
}

} // namespace memc::kernels
