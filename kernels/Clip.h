//===- Clip.h - what clip computes ------------------------------*- C++ -*-===//
//
// clip's function on the compute type of its elements (MEMC_HOST_DEVICE) and its bounds from
// the op's attributes, integer bounds rounded into the type's range: one copy for the CPU
// kernel (kernels/cpu/Unary.cpp) and the CUDA one (kernels/cuda/Unary.cu).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CLIP_H
#define MEMC_KERNELS_CLIP_H

#include "kernels/HostDevice.h"

#include <cmath>
#include <limits>
#include <type_traits>

namespace memc::kernels {

/// min(max(x, lo), hi) with NaN passing through; hi wins when lo > hi, as in ONNX.
template <typename C> struct Clip {
  C lo, hi;
  MEMC_HOST_DEVICE C operator()(C x) const {
    if (x < lo)
      x = lo;
    if (x > hi)
      x = hi;
    return x;
  }
};

/// A clip bound in the integer type's range (`roundUp` for a lower bound, so that x >= 0.5
/// means x >= 1 on integers). Host only: the bounds are attributes.
template <typename C> C integerClipBound(double bound, bool roundUp) {
  double rounded = roundUp ? std::ceil(bound) : std::floor(bound);
  if (rounded <= static_cast<double>(std::numeric_limits<C>::lowest()))
    return std::numeric_limits<C>::lowest();
  // The max converts to 2^31 or 2^63 exactly; anything below it converts without overflow.
  if (rounded >= static_cast<double>(std::numeric_limits<C>::max()))
    return std::numeric_limits<C>::max();
  return static_cast<C>(rounded);
}

/// Clip's bounds for compute type C from the attributes' doubles (+-inf when absent).
template <typename C> Clip<C> clipFor(double minBound, double maxBound) {
  if constexpr (std::is_integral_v<C>)
    return {integerClipBound<C>(minBound, true), integerClipBound<C>(maxBound, false)};
  else
    return {static_cast<float>(minBound), static_cast<float>(maxBound)};
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CLIP_H
