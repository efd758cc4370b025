//===- ElementTypes.h - C++ types of the element types ----------*- C++ -*-===//
//
// Kernels are templates over the storage type of their elements; Element<T> says how a stored
// value is computed on (f16/bf16 in f32, bool as 0/1) and stored back, and visit* dispatch a
// DType to a generic lambda taking a TypeTag<T>. The visitors assume the dtype was checked to
// be in their set; an unexpected one takes the first branch rather than crashing.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ELEMENTTYPES_H
#define MEMC_KERNELS_CPU_ELEMENTTYPES_H

#include "kernels/Float16.h"
#include "kernels/Tensor.h"
#include "kernels/ops/TypeClasses.h"

#include <cstdint>
#include <type_traits>
#include <vector>

namespace memc::kernels {

/// Storage type of DType::Bool: one byte; any non-zero byte reads as true.
using BoolByte = uint8_t;

template <typename T> struct Element {
  using Compute = T;
  static Compute load(T value) { return value; }
  static T store(Compute value) { return value; }
};

template <> struct Element<Half> {
  using Compute = float;
  static float load(Half value) { return halfToFloat(value.bits); }
  static Half store(float value) { return Half{floatToHalf(value)}; }
};

template <> struct Element<BFloat16> {
  using Compute = float;
  static float load(BFloat16 value) { return bfloat16ToFloat(value.bits); }
  static BFloat16 store(float value) { return BFloat16{floatToBFloat16(value)}; }
};

template <> struct Element<BoolByte> {
  using Compute = bool;
  static bool load(BoolByte value) { return value != 0; }
  static BoolByte store(bool value) { return value ? 1 : 0; }
};

template <typename T> using ComputeOf = typename Element<T>::Compute;

/// The storage types the visitors hand out have the table's widths.
template <typename T> constexpr bool storesAs(DType dtype) {
  return sizeof(T) * 8 == dtypeRow(dtype).bits;
}
static_assert(storesAs<float>(DType::F32) && storesAs<Half>(DType::F16) &&
              storesAs<BFloat16>(DType::BF16) && storesAs<int64_t>(DType::I64) &&
              storesAs<int32_t>(DType::I32) && storesAs<BoolByte>(DType::Bool));

template <typename T> struct TypeTag { using type = T; };

template <typename Fn> decltype(auto) visitFloat(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::F16:
    return fn(TypeTag<Half>{});
  case DType::BF16:
    return fn(TypeTag<BFloat16>{});
  default:
    return fn(TypeTag<float>{});
  }
}

template <typename Fn> decltype(auto) visitNumeric(DType dtype, Fn &&fn) {
  switch (dtype) {
  case DType::I64:
    return fn(TypeTag<int64_t>{});
  case DType::I32:
    return fn(TypeTag<int32_t>{});
  default:
    return visitFloat(dtype, fn);
  }
}

template <typename Fn> decltype(auto) visitAny(DType dtype, Fn &&fn) {
  if (dtype == DType::Bool)
    return fn(TypeTag<BoolByte>{});
  return visitNumeric(dtype, fn);
}

template <typename Fn> decltype(auto) visitIndex(DType dtype, Fn &&fn) {
  if (dtype == DType::I32)
    return fn(TypeTag<int32_t>{});
  return fn(TypeTag<int64_t>{});
}

template <TypeClass Class, typename Fn> decltype(auto) visitClass(DType dtype, Fn &&fn) {
  if constexpr (Class == TypeClass::Float)
    return visitFloat(dtype, fn);
  else if constexpr (Class == TypeClass::Numeric)
    return visitNumeric(dtype, fn);
  else if constexpr (Class == TypeClass::Bool)
    return fn(TypeTag<BoolByte>{});
  else
    return visitAny(dtype, fn);
}

/// Layout kernels move elements without looking at them: as unsigned integers of their size.
template <typename Fn> decltype(auto) visitBits(DType dtype, Fn &&fn) {
  switch (dtypeSize(dtype)) {
  case 1:
    return fn(TypeTag<uint8_t>{});
  case 2:
    return fn(TypeTag<uint16_t>{});
  case 8:
    return fn(TypeTag<uint64_t>{});
  default:
    return fn(TypeTag<uint32_t>{});
  }
}

/// A float tensor's values as f32 in `values` (numElements of them), which it returns.
inline float *loadAsFloat(const TensorView &tensor, float *values) {
  visitFloat(tensor.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *data = tensor.as<T>();
    for (int64_t i = 0; i < tensor.numElements(); ++i)
      values[i] = Element<T>::load(data[i]);
  });
  return values;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ELEMENTTYPES_H
