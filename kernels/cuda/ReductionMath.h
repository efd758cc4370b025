//===- ReductionMath.h - the arithmetic of the CUDA reductions and scans -*- C++ -*-===//
//
// reduce_sum, reduce_mean, reduce_max, reduce_prod, reduce_l2, reduce_log_sum_exp and cumsum
// as MEMC_HOST_DEVICE pieces that Reduction.cu and Scan.cu run on the device and
// RowMathTest.cpp runs on the host against the CPU kernels:
//  - the reducers: the CPU's, accumulator for accumulator: kernels/Reducers.h's f64 sums,
//    products and squares for floats, f32 maxima (NaN propagates) and i64 with wrap-around for
//    integers, and here log_sum_exp's rescaled f32 exp-sum (kernels/cpu/Reduction.cpp's), with
//    the same empty results;
//  - the plan: the input's dimensions merged into kept and reduced groups (size-1 ones
//    dropped) by the CPU's ReductionLayout (kernels/ReductionLayout.h), and the reduced range
//    cut into `splits` chunks whose partial results a second pass combines in order (so the
//    result does not depend on how the GPU schedules blocks);
//  - cumsum's column walk: one f64 (float types) or i64 (integers) running sum.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_REDUCTIONMATH_H
#define MEMC_KERNELS_CUDA_REDUCTIONMATH_H

#include "kernels/Reducers.h"
#include "kernels/ReductionLayout.h"
#include "kernels/cuda/RowMath.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace memc::kernels::cuda::rows {

//===----------------------------------------------------------------------===//
// log_sum_exp's reducer (the others are kernels/Reducers.h's)
//===----------------------------------------------------------------------===//

/// log(sum) + max of the elements seen: sum(e^x) = e^max * sum(e^(x - max)).
struct ScaledExpSum {
  float max, sum;
};

template <typename T> struct LogSumExpReducer {
  using Acc = ScaledExpSum;
  MEMC_HOST_DEVICE static Acc init() { return {kNegativeInfinity, 0.0f}; }
  MEMC_HOST_DEVICE static Acc add(Acc acc, float value) { return combine(acc, {value, 1.0f}); }
  MEMC_HOST_DEVICE static Acc combine(Acc a, Acc b) {
    if (a.max != a.max || b.max != b.max)
      return {std::numeric_limits<float>::quiet_NaN(), 1.0f};
    if (a.max < b.max) {
      Acc larger = b;
      b = a;
      a = larger;
    }
    if (b.max == kNegativeInfinity)
      return a; // nothing to add (an empty part, or e^-inf = 0)
    if (a.max == std::numeric_limits<float>::infinity())
      return {a.max, 1.0f}; // inf - inf must not make a NaN
    return {a.max, a.sum + b.sum * expf(b.max - a.max)};
  }
  MEMC_HOST_DEVICE static T finish(Acc acc, int64_t) {
    return Element<T>::store(acc.max + logf(acc.sum));
  }
};

//===----------------------------------------------------------------------===//
// The plan of a reduction
//===----------------------------------------------------------------------===//

/// Every accumulator fits the 8 bytes a partial result takes in the workspace.
constexpr int64_t kPartialBytes = 8;

/// Merged groups of dimensions beyond which the CUDA reductions refuse a call (a tensor of rank
/// up to 16 never has more: kept and reduced groups alternate).
constexpr int kMaxDimGroups = 8;

/// A strided index space: linear index -> element offset.
struct DimGroups {
  int count;
  int64_t dims[kMaxDimGroups], strides[kMaxDimGroups];

  MEMC_HOST_DEVICE int64_t offsetOf(int64_t linear) const {
    if (count == 1)
      return linear * strides[0];
    int64_t offset = 0;
    for (int d = count; d-- > 0;) {
      offset += (linear % dims[d]) * strides[d];
      linear /= dims[d];
    }
    return offset;
  }
};

/// Output o reduces the elements outputBase(o) + reducedOffset(r), r in [0, count); the
/// reduced range is cut into `splits` chunks of `chunk` (the last may be shorter or empty).
/// With width > 1 the innermost dimensions are kept and consecutive outputs are adjacent in
/// memory; with width == 1 the innermost are reduced. `byWarps`: a warp per output chunk
/// (innermost reduced, ranges of a warp or more), else a thread.
struct ReductionPlan {
  DimGroups outer, reduced;
  int64_t width, outputs, count, splits, chunk;
  bool byWarps;

  MEMC_HOST_DEVICE int64_t outputBase(int64_t o) const {
    return outer.offsetOf(o / width) + o % width;
  }
  MEMC_HOST_DEVICE int64_t reducedOffset(int64_t r) const { return reduced.offsetOf(r); }
  MEMC_HOST_DEVICE int64_t chunkBegin(int64_t split) const {
    int64_t begin = split * chunk;
    return begin < count ? begin : count;
  }
  MEMC_HOST_DEVICE int64_t chunkEnd(int64_t split) const { return chunkBegin(split + 1); }
};

/// Partial results cut a reduced range into at most this many chunks.
constexpr int64_t kMaxReductionSplits = 1024;
/// What keeps an H100/H200 busy: warps or threads, one per output chunk.
constexpr int64_t kTargetWarps = 132 * 64;
constexpr int64_t kTargetThreads = 132 * 2048;
/// The least elements a chunk gets: per warp, per thread.
constexpr int64_t kMinWarpChunk = 1024;
constexpr int64_t kMinThreadChunk = 64;

/// The groups of `input` reduced over the sorted `axes` (ReductionLayout.h); false when a group
/// list would exceed kMaxDimGroups.
inline bool planReduction(const std::vector<int64_t> &input, const std::vector<int64_t> &axes,
                          ReductionPlan &plan) {
  const ReductionLayout layout(input, axes);
  if (layout.outerDims.size() > kMaxDimGroups || layout.reducedDims.size() > kMaxDimGroups)
    return false;
  plan.width = layout.width;
  plan.outputs = layout.outputs;
  plan.count = layout.count;
  auto fill = [](DimGroups &groups, const std::vector<int64_t> &dims,
                 const std::vector<int64_t> &groupStrides) {
    groups.count = static_cast<int>(dims.size());
    for (int g = 0; g < kMaxDimGroups; ++g) {
      groups.dims[g] = g < groups.count ? dims[g] : 1;
      groups.strides[g] = g < groups.count ? groupStrides[g] : 0;
    }
  };
  fill(plan.outer, layout.outerDims, layout.outerStrides);
  fill(plan.reduced, layout.reducedDims, layout.reducedStrides);
  // Enough chunks to fill the GPU when the outputs alone do not, none shorter than the least.
  plan.byWarps = plan.width == 1 && plan.count >= kWarpSize;
  int64_t target = plan.byWarps ? kTargetWarps : kTargetThreads;
  int64_t least = plan.byWarps ? kMinWarpChunk : kMinThreadChunk;
  int64_t wanted = plan.outputs == 0 ? 1 : (target + plan.outputs - 1) / plan.outputs;
  int64_t affordable = (plan.count + least - 1) / least;
  plan.splits = std::max<int64_t>(1, std::min({wanted, affordable, kMaxReductionSplits}));
  plan.chunk = (plan.count + plan.splits - 1) / plan.splits;
  return true;
}

//===----------------------------------------------------------------------===//
// cumsum
//===----------------------------------------------------------------------===//

/// The running sum along one row x[j * stride], j in [0, length), into y (which may be x),
/// backwards with `reverse`, storing each sum before its element is added with `exclusive`.
template <typename T>
MEMC_HOST_DEVICE void cumsumRow(const T *x, T *y, int64_t length, int64_t stride, bool exclusive,
                                bool reverse) {
  using Sum = SumReducer<T>;
  typename Sum::Acc sum = Sum::init();
  for (int64_t step = 0; step < length; ++step) {
    int64_t i = (reverse ? length - 1 - step : step) * stride;
    typename Sum::Acc before = sum;
    sum = Sum::add(sum, Element<T>::load(x[i]));
    y[i] = Sum::finish(exclusive ? before : sum, 0);
  }
}

} // namespace memc::kernels::cuda::rows

#endif // MEMC_KERNELS_CUDA_REDUCTIONMATH_H
