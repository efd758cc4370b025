//===- UnaryChecks.cpp - the checks of elementwise ops of one operand -----===//
//
// neg exp log sqrt reciprocal erf tanh sigmoid relu not abs sin cos softplus hard_swish, gelu,
// bias_gelu,
// leaky_relu elu hard_sigmoid, clip, trilu, cast, refresh_copy, dropout.
//
//===----------------------------------------------------------------------===//
#include "kernels/ops/CallChecks.h"
#include "kernels/ops/CheckGroups.h"

#include <cmath>

namespace memc::kernels {
namespace {

bool checkSameTypeAndShape(const KernelCall &call, TypeClass typeClass, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkDType(call.inputs[0], typesOf(typeClass), "input", error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "output", error);
}

bool checkGelu(const KernelCall &call, std::string &error) {
  return checkSameTypeAndShape(call, TypeClass::Float, error) &&
         checkGeluApproximate(attributesOf(call), error);
}

bool checkBiasGelu(const KernelCall &call, std::string &error) {
  return checkCall(call, 2, 2, 1, error) &&
         checkDType(call.inputs[0], kFloatTypes, "input", error) &&
         checkDType(call.inputs[1], kFloatTypes, "bias", error) &&
         lastAxisBiasShape(call.inputs[0].shape, call.inputs[1].shape, error) &&
         checkSameDType(call.outputs[0], call.inputs[0], "output", "input", error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "output", error) &&
         checkGeluApproximate(attributesOf(call), error);
}

/// An f64 coefficient attribute that must be present and finite.
bool requireFiniteCoefficient(const Attributes &attributes, const std::string &name,
                              std::string &error) {
  double value;
  if (!requireFloat(attributes, name, value, error))
    return false;
  if (!std::isfinite(value)) {
    error = name + " must be finite";
    return false;
  }
  return true;
}

/// leaky_relu and elu (alpha), hard_sigmoid (alpha, beta).
template <bool HasBeta> bool checkScaledActivation(const KernelCall &call, std::string &error) {
  const Attributes &attributes = attributesOf(call);
  return checkSameTypeAndShape(call, TypeClass::Float, error) &&
         requireFiniteCoefficient(attributes, "alpha", error) &&
         (!HasBeta || requireFiniteCoefficient(attributes, "beta", error));
}

bool checkClip(const KernelCall &call, std::string &error) {
  bool hasMin, hasMax;
  double min, max;
  const Attributes &attributes = attributesOf(call);
  if (!checkSameTypeAndShape(call, TypeClass::Numeric, error) ||
      !optionalFloat(attributes, "min", hasMin, min, error) ||
      !optionalFloat(attributes, "max", hasMax, max, error))
    return false;
  if ((hasMin && std::isnan(min)) || (hasMax && std::isnan(max))) {
    error = "clip bounds must not be NaN";
    return false;
  }
  return true;
}

bool checkTrilu(const KernelCall &call, std::string &error) {
  int64_t k;
  bool upper;
  const Attributes &attributes = attributesOf(call);
  return checkSameTypeAndShape(call, TypeClass::Any, error) &&
         checkRankAtLeast(call.inputs[0], 2, "input", error) &&
         requireInt(attributes, "k", k, error) && requireBool(attributes, "upper", upper, error);
}

bool checkCast(const KernelCall &call, std::string &error) {
  return checkCall(call, 1, 1, 1, error) &&
         checkShape(call.outputs[0], call.inputs[0].shape, "output", error);
}

/// Inputs: refresh (an f32 scalar), source (float), copy (float, the source's shape). Output: the
/// copy's type.
bool checkRefreshCopy(const KernelCall &call, std::string &error) {
  return checkCall(call, 3, 3, 1, error) &&
         checkDType(call.inputs[0], {DType::F32}, "refresh", error) &&
         checkShape(call.inputs[0], {}, "refresh", error) &&
         checkDType(call.inputs[1], kFloatTypes, "source", error) &&
         checkDType(call.inputs[2], kFloatTypes, "copy", error) &&
         checkShape(call.inputs[2], call.inputs[1].shape, "copy", error) &&
         checkSameDType(call.outputs[0], call.inputs[2], "output", "copy", error) &&
         checkShape(call.outputs[0], call.inputs[1].shape, "output", error);
}

/// Inputs: the tensor and, optionally, a scalar i64 salt that varies the mask between steps.
bool checkDropout(const KernelCall &call, std::string &error) {
  double ratio;
  int64_t seed;
  const Attributes &attributes = attributesOf(call);
  if (call.inputs.size() == 2) {
    if (!checkDType(call.inputs[1], {DType::I64}, "salt", error) ||
        !checkShape(call.inputs[1], {}, "salt", error))
      return false;
    KernelCall data = call;
    data.inputs.pop_back();
    return checkDropout(data, error);
  }
  if (!checkSameTypeAndShape(call, TypeClass::Float, error) ||
      !requireFloat(attributes, "ratio", ratio, error) ||
      !requireInt(attributes, "seed", seed, error))
    return false;
  if (!(ratio >= 0.0 && ratio < 1.0)) {
    error = "dropout ratio must be in [0, 1), got " + std::to_string(ratio);
    return false;
  }
  return true;
}

/// The attribute-free functions: one operand of the type class, a result like it.
template <TypeClass Types> bool checkUnary(const KernelCall &call, std::string &error) {
  return checkSameTypeAndShape(call, Types, error);
}

} // namespace

void addUnaryChecks(OpChecks &table) {
  table["neg"] = &checkUnary<TypeClass::Numeric>;
  table["exp"] = &checkUnary<TypeClass::Float>;
  table["log"] = &checkUnary<TypeClass::Float>;
  table["sqrt"] = &checkUnary<TypeClass::Float>;
  table["reciprocal"] = &checkUnary<TypeClass::Float>;
  table["erf"] = &checkUnary<TypeClass::Float>;
  table["tanh"] = &checkUnary<TypeClass::Float>;
  table["sigmoid"] = &checkUnary<TypeClass::Float>;
  table["relu"] = &checkUnary<TypeClass::Numeric>;
  table["not"] = &checkUnary<TypeClass::Bool>;
  table["abs"] = &checkUnary<TypeClass::Numeric>;
  table["sin"] = &checkUnary<TypeClass::Float>;
  table["cos"] = &checkUnary<TypeClass::Float>;
  table["softplus"] = &checkUnary<TypeClass::Float>;
  table["hard_swish"] = &checkUnary<TypeClass::Float>;
  table["leaky_relu"] = &checkScaledActivation<false>;
  table["elu"] = &checkScaledActivation<false>;
  table["hard_sigmoid"] = &checkScaledActivation<true>;
  table["gelu"] = &checkGelu;
  table["bias_gelu"] = &checkBiasGelu;
  table["clip"] = &checkClip;
  table["trilu"] = &checkTrilu;
  table["cast"] = &checkCast;
  table["refresh_copy"] = &checkRefreshCopy;
  table["dropout"] = &checkDropout;
}

} // namespace memc::kernels
