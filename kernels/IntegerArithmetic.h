//===- IntegerArithmetic.h - the integer rules of the elementwise ops -*- C++ -*-===//
//
// Integer add, sub, mul, neg and pow wrap (two's complement, through the unsigned type, as
// PyTorch's do); integer div truncates toward zero (C, ONNX) with the cases C leaves undefined
// defined rather than trapping: x / 0 = 0 and INT_MIN / -1 = INT_MIN. One copy for the CPU
// kernels (cpu/Binary.cpp, cpu/Unary.cpp) and the CUDA ones (cuda/ElementwiseMath.h).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_INTEGERARITHMETIC_H
#define MEMC_KERNELS_INTEGERARITHMETIC_H

#include "kernels/HostDevice.h"

#include <type_traits>

namespace memc::kernels {

template <typename C> using Unsigned = std::make_unsigned_t<C>;

template <typename C> MEMC_HOST_DEVICE C wrapAdd(C a, C b) {
  return static_cast<C>(static_cast<Unsigned<C>>(a) + static_cast<Unsigned<C>>(b));
}
template <typename C> MEMC_HOST_DEVICE C wrapSub(C a, C b) {
  return static_cast<C>(static_cast<Unsigned<C>>(a) - static_cast<Unsigned<C>>(b));
}
template <typename C> MEMC_HOST_DEVICE C wrapMul(C a, C b) {
  return static_cast<C>(static_cast<Unsigned<C>>(a) * static_cast<Unsigned<C>>(b));
}

/// -x, wrapping for integers (-INT_MIN = INT_MIN).
template <typename C> MEMC_HOST_DEVICE C wrapNegate(C x) {
  if constexpr (std::is_integral_v<C>)
    return static_cast<C>(Unsigned<C>(0) - static_cast<Unsigned<C>>(x));
  else
    return -x;
}

/// a / b truncated toward zero, with x / 0 = 0 and INT_MIN / -1 = INT_MIN.
template <typename C> MEMC_HOST_DEVICE C divideTruncating(C a, C b) {
  if (b == 0)
    return 0;
  if (b == -1)
    return wrapNegate(a);
  return a / b;
}

/// a^b wrapping; a negative exponent gives 1/a^n truncated, i.e. 0 unless |a| == 1.
template <typename C> MEMC_HOST_DEVICE C wrapPow(C a, C b) {
  if (b < 0)
    return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
  Unsigned<C> base = static_cast<Unsigned<C>>(a), result = 1;
  for (C e = b; e != 0; e >>= 1) {
    if (e & 1)
      result *= base;
    base *= base;
  }
  return static_cast<C>(result);
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_INTEGERARITHMETIC_H
