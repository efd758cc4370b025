//===- Accumulate.h - sums without a serial dependency chain ----*- C++ -*-===//
//
// A sum accumulated into one variable runs at one add per FP latency. These keep kLanes
// independent partial sums (vectorizable, no reassociation needed) and add them in a fixed
// order, so results are deterministic and independent of the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_ACCUMULATE_H
#define MEMC_KERNELS_CPU_ACCUMULATE_H

#include "kernels/cpu/ElementTypes.h"

#include <cstdint>

namespace memc::kernels {

constexpr int64_t kLanes = 8;

/// Folds `fold(acc, value)` over x[0, n) in kLanes interleaved accumulators, then combines
/// them with `combine`, lane 0 first.
template <typename Acc, typename T, typename Fold, typename Combine>
Acc foldLanes(const T *x, int64_t n, Acc init, Fold fold, Combine combine) {
  Acc lanes[kLanes];
  for (Acc &lane : lanes)
    lane = init;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes)
    for (int64_t l = 0; l < kLanes; ++l)
      lanes[l] = fold(lanes[l], Element<T>::load(x[i + l]));
  for (int64_t l = 0; i < n; ++i, ++l)
    lanes[l] = fold(lanes[l], Element<T>::load(x[i]));
  Acc result = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l)
    result = combine(result, lanes[l]);
  return result;
}

/// Sum of x[0, n) in f64.
template <typename T> double sumLanes(const T *x, int64_t n) {
  auto add = [](double a, double b) { return a + b; };
  return foldLanes<double>(x, n, 0.0, add, add);
}

/// Sum of (x[i] - center)^2 over x[0, n) in f64.
template <typename T> double squaredDeviationLanes(const T *x, int64_t n, double center) {
  return foldLanes<double>(
      x, n, 0.0, [center](double acc, double v) { return acc + (v - center) * (v - center); },
      [](double a, double b) { return a + b; });
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_ACCUMULATE_H
