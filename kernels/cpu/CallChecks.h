//===- CallChecks.h - building blocks of the kernels' check() ---*- C++ -*-===//
//
// Each helper returns false with a message in `error` when the call fails its condition, so a
// check() reads as a chain of `if (!...) return false;`.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CALLCHECKS_H
#define MEMC_KERNELS_CPU_CALLCHECKS_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"
#include "kernels/cpu/ElementTypes.h"

#include <initializer_list>
#include <string>

namespace memc::kernels {

/// Element-type sets of the memc dialect.
using DTypeSet = std::initializer_list<DType>;
inline constexpr DTypeSet kFloatTypes = {DType::F32, DType::F16, DType::BF16};
inline constexpr DTypeSet kNumericTypes = {DType::F32, DType::F16, DType::BF16, DType::I64,
                                           DType::I32};
inline constexpr DTypeSet kAnyType = {DType::F32, DType::F16, DType::BF16,
                                      DType::I64, DType::I32, DType::Bool};
inline constexpr DTypeSet kIndexTypes = {DType::I64, DType::I32};
inline constexpr DTypeSet kBoolType = {DType::Bool};

inline DTypeSet typesOf(TypeClass typeClass) {
  switch (typeClass) {
  case TypeClass::Float:
    return kFloatTypes;
  case TypeClass::Numeric:
    return kNumericTypes;
  case TypeClass::Bool:
    return kBoolType;
  default:
    return kAnyType;
  }
}

/// The call's attributes, or an empty set when it has none.
const Attributes &attributesOf(const KernelCall &call);

/// Input count in [minInputs, maxInputs], the output count, and every tensor well formed:
/// a known dtype, non-negative dimensions, at most kMaxElements elements.
bool checkCall(const KernelCall &call, size_t minInputs, size_t maxInputs, size_t outputs,
               std::string &error);

bool checkDType(const TensorView &tensor, DTypeSet allowed, const std::string &role,
                std::string &error);
bool checkSameDType(const TensorView &tensor, const TensorView &reference, const std::string &role,
                    const std::string &referenceRole, std::string &error);
bool checkShape(const TensorView &tensor, const Shape &expected, const std::string &role,
                std::string &error);
bool checkRankAtLeast(const TensorView &tensor, int64_t rank, const std::string &role,
                      std::string &error);

/// Required attributes of a given kind. Booleans are integers 0 or 1.
bool requireInt(const Attributes &attributes, const std::string &name, int64_t &value,
                std::string &error);
bool requireBool(const Attributes &attributes, const std::string &name, bool &value,
                 std::string &error);
bool requireFloat(const Attributes &attributes, const std::string &name, double &value,
                  std::string &error);
bool requireInts(const Attributes &attributes, const std::string &name,
                 std::vector<int64_t> &values, std::string &error);
/// `axis` names a dimension of `tensor` (0 <= axis < rank).
bool checkAxisInRange(int64_t axis, const TensorView &tensor, std::string &error);
/// GELU's optional `approximate`: "none" (the default) or "tanh".
bool checkGeluApproximate(const Attributes &attributes, std::string &error);
/// The normalisations' `epsilon`: present, finite and non-negative.
bool checkEpsilon(const Attributes &attributes, std::string &error);
/// An optional attribute: absent is fine (`present` false), present with another kind is not.
bool optionalFloat(const Attributes &attributes, const std::string &name, bool &present,
                   double &value, std::string &error);
bool optionalString(const Attributes &attributes, const std::string &name, std::string &value,
                    std::string &error);

/// A tensor's type for messages: "f32[2,3]".
std::string describe(const TensorView &tensor);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CALLCHECKS_H
