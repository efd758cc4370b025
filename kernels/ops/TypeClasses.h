//===- TypeClasses.h - the memc dialect's element-type sets -----*- C++ -*-===//
//
// The sets an op's operands are drawn from (memc's ODS type constraints), as the shared checks
// name them (DTypeSet) and as kernels dispatch on them at compile time (TypeClass).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_TYPECLASSES_H
#define MEMC_KERNELS_OPS_TYPECLASSES_H

#include "kernels/Tensor.h"

#include <initializer_list>

namespace memc::kernels {

/// The element-type sets of the memc dialect, as a template parameter.
enum class TypeClass { Float, Numeric, Bool, Any };

/// The same sets as lists of element types.
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

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_TYPECLASSES_H
