//===- StoredElement.h - how a stored element is computed on ----*- C++ -*-===//
//
// Kernels are templates over the storage type of their elements; Element<T> says how a stored
// value is computed on (f16/bf16 in f32, bool as 0/1, the others as themselves) and stored
// back, rounding once, and convertElement how a cast turns one element type into another.
// MEMC_HOST_DEVICE, so that the CPU kernels, the CUDA kernels and the host tests of the CUDA
// kernels' arithmetic load, round and convert elements with the same code.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_STOREDELEMENT_H
#define MEMC_KERNELS_STOREDELEMENT_H

#include "kernels/Float16.h"
#include "kernels/HostDevice.h"

#include <cstdint>
#include <limits>
#include <type_traits>

namespace memc::kernels {

/// Storage type of DType::Bool: one byte; any non-zero byte reads as true.
using BoolByte = uint8_t;

template <typename T> struct Element {
  using Compute = T;
  MEMC_HOST_DEVICE static Compute load(T value) { return value; }
  MEMC_HOST_DEVICE static T store(Compute value) { return value; }
};

template <> struct Element<Half> {
  using Compute = float;
  MEMC_HOST_DEVICE static float load(Half value) { return halfToFloat(value.bits); }
  MEMC_HOST_DEVICE static Half store(float value) { return Half{floatToHalf(value)}; }
};

template <> struct Element<BFloat16> {
  using Compute = float;
  MEMC_HOST_DEVICE static float load(BFloat16 value) { return bfloat16ToFloat(value.bits); }
  MEMC_HOST_DEVICE static BFloat16 store(float value) { return BFloat16{floatToBFloat16(value)}; }
};

template <> struct Element<BoolByte> {
  using Compute = bool;
  MEMC_HOST_DEVICE static bool load(BoolByte value) { return value != 0; }
  MEMC_HOST_DEVICE static BoolByte store(bool value) { return value ? 1 : 0; }
};

template <typename T> using ComputeOf = typename Element<T>::Compute;

/// Element i of a float tensor (float, Half, BFloat16) as f32.
template <typename T> MEMC_HOST_DEVICE inline float loadFloat(const T *data, int64_t i) {
  static_assert(std::is_same_v<ComputeOf<T>, float>, "a float type");
  return Element<T>::load(data[i]);
}

/// Stores `value` rounded to T (round to nearest even).
template <typename T> MEMC_HOST_DEVICE inline void storeFloat(T *data, int64_t i, float value) {
  static_assert(std::is_same_v<ComputeOf<T>, float>, "a float type");
  data[i] = Element<T>::store(value);
}

/// Float to integer: truncation toward zero, saturating at the type's range, NaN to 0 (C++
/// leaves those cases undefined; PyTorch and ONNX leave them unspecified).
template <typename I> MEMC_HOST_DEVICE I truncateToInteger(float value) {
  if (value != value)
    return 0;
  if (value <= static_cast<float>(std::numeric_limits<I>::lowest()))
    return std::numeric_limits<I>::lowest();
  if (value >= static_cast<float>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(value);
}

/// One element of a cast: to bool as != 0, to float through f32, float to integer truncating,
/// integer to integer wrapping.
template <typename From, typename To> MEMC_HOST_DEVICE To convertElement(From stored) {
  using C = ComputeOf<From>;
  using Out = ComputeOf<To>;
  C value = Element<From>::load(stored);
  if constexpr (std::is_same_v<Out, bool>)
    return Element<To>::store(value != C(0));
  else if constexpr (std::is_floating_point_v<Out>)
    return Element<To>::store(static_cast<float>(value));
  else if constexpr (std::is_floating_point_v<C>)
    return truncateToInteger<Out>(value);
  else
    return static_cast<To>(value); // integers wrap; bool is 0 or 1
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_STOREDELEMENT_H
