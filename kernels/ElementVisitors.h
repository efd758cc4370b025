//===- ElementVisitors.h - a DType to its storage type ----------*- C++ -*-===//
//
// The visit* functions dispatch a run-time DType to a generic lambda taking a TypeTag<T>, T the
// storage type of the dtype (StoredElement.h): `[&](auto tag) { using T = typename
// decltype(tag)::type; ... }`. Host code of every backend: the CPU kernels and the launches of
// the CUDA kernels. The visitors assume the dtype was checked to be in their set; an unexpected
// one takes the first branch rather than crashing.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_ELEMENTVISITORS_H
#define MEMC_KERNELS_ELEMENTVISITORS_H

#include "kernels/DTypeTable.h"
#include "kernels/StoredElement.h"
#include "kernels/ops/TypeClasses.h"

#include <cstdint>

namespace memc::kernels {

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

/// An index tensor's storage type (i32 or i64).
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

/// Kernels that move elements without looking at them see unsigned integers of their size.
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

} // namespace memc::kernels

#endif // MEMC_KERNELS_ELEMENTVISITORS_H
