//===- Reducers.h - the reductions' accumulators ----------------*- C++ -*-===//
//
// reduce_sum, reduce_mean, reduce_max, reduce_prod and reduce_l2 as reducers: init(),
// add(acc, value), combine(acc, acc) and finish(acc, count) -> T. Floats accumulate sums,
// products and squares in f64 and compare maxima in f32 (NaN wins, as in PyTorch); integers
// accumulate in i64 with wrap-around. MEMC_HOST_DEVICE: the CPU kernels (kernels/cpu/
// Reduction.cpp) and the CUDA ones (kernels/cuda/Reduction.cu, Scan.cu) accumulate alike.
// log_sum_exp's reducer is each backend's, for its exp.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_REDUCERS_H
#define MEMC_KERNELS_REDUCERS_H

#include "kernels/HostDevice.h"
#include "kernels/IntegerArithmetic.h"
#include "kernels/StoredElement.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace memc::kernels {

/// f64 for float types, i64 (wrapping) for integers: how sums and products accumulate.
template <typename T>
using WideOf = std::conditional_t<std::is_integral_v<ComputeOf<T>>, int64_t, double>;

template <typename T> struct SumReducer {
  using C = ComputeOf<T>;
  using Acc = WideOf<T>;
  MEMC_HOST_DEVICE static Acc init() { return 0; }
  MEMC_HOST_DEVICE static Acc add(Acc acc, C value) {
    return combine(acc, static_cast<Acc>(value));
  }
  MEMC_HOST_DEVICE static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_integral_v<C>)
      return wrapAdd(a, b);
    else
      return a + b;
  }
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t) {
    return Element<T>::store(static_cast<C>(acc));
  }
};

/// The sum over the count; integers divide with truncation toward zero (0 for an empty range),
/// floats give NaN for an empty one.
template <typename T> struct MeanReducer : SumReducer<T> {
  using typename SumReducer<T>::Acc;
  using typename SumReducer<T>::C;
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t count) {
    if constexpr (std::is_integral_v<C>)
      return static_cast<T>(count == 0 ? 0 : acc / count);
    else
      return Element<T>::store(static_cast<float>(acc / static_cast<double>(count)));
  }
};

template <typename T> struct MaxReducer {
  using C = ComputeOf<T>;
  using Acc = C;
  MEMC_HOST_DEVICE static Acc init() {
    if constexpr (std::is_integral_v<C>)
      return std::numeric_limits<C>::lowest();
    else
      return -std::numeric_limits<float>::infinity();
  }
  MEMC_HOST_DEVICE static Acc add(Acc acc, C value) { return combine(acc, value); }
  /// NaN wins, as in PyTorch.
  MEMC_HOST_DEVICE static Acc combine(Acc a, Acc b) { return (b > a || b != b) ? b : a; }
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t) { return Element<T>::store(acc); }
};

template <typename T> struct ProdReducer {
  using C = ComputeOf<T>;
  using Acc = WideOf<T>;
  MEMC_HOST_DEVICE static Acc init() { return 1; }
  MEMC_HOST_DEVICE static Acc add(Acc acc, C value) {
    return combine(acc, static_cast<Acc>(value));
  }
  MEMC_HOST_DEVICE static Acc combine(Acc a, Acc b) {
    if constexpr (std::is_integral_v<C>)
      return wrapMul(a, b);
    else
      return a * b;
  }
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t) {
    return Element<T>::store(static_cast<C>(acc));
  }
};

template <typename T> struct L2Reducer {
  using Acc = double;
  MEMC_HOST_DEVICE static Acc init() { return 0; }
  MEMC_HOST_DEVICE static Acc add(Acc acc, float value) {
    return acc + static_cast<double>(value) * value;
  }
  MEMC_HOST_DEVICE static Acc combine(Acc a, Acc b) { return a + b; }
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t) {
    return Element<T>::store(static_cast<float>(sqrt(acc)));
  }
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_REDUCERS_H
