//===- Reduction.cpp - reduce_sum/mean/max/prod/l2/log_sum_exp -----------===//
//
// The input's dimensions are merged into alternating groups of kept and reduced ones (size-1
// dimensions dropped), so any axes set becomes one of two loops:
//  - the innermost group is reduced: each output is a walk over contiguous runs;
//  - the innermost group is kept (width W): blocks of up to 256 outputs accumulate whole rows,
//    so the loads stay contiguous (a bias gradient: reduce [B, S, H] over {0, 1}).
// When there are too few output blocks to feed the threads, the reduced range is also cut into
// fixed blocks whose partial results are combined in block order: the result does not depend
// on the thread count.
//
// Floats accumulate sums, products and sums of squares in f64 and compare maxima in f32 (NaN
// propagates, as in PyTorch); integers accumulate in i64 with wrap-around, and reduce_mean of
// integers divides with truncation toward zero. reduce_log_sum_exp keeps a running maximum and
// the sum of exp(x - maximum) in f32, rescaled when the maximum grows, so it never overflows. An
// empty reduction gives 0 (sum, l2), 1 (prod), NaN (mean of floats), 0 (mean of integers),
// -inf/the type's lowest value (max) or -inf (log_sum_exp). The reducers are kernels/Reducers.h's,
// which the CUDA kernels share, but for log_sum_exp's (VectorMath's exp) here.
//
// Workspace: the partial results of a cut reduced range (8 bytes per accumulator, enough for
// any of them). The per-thread accumulators of one block (at most 256) stay on the heap: their
// size does not grow with the tensors.
//
//===----------------------------------------------------------------------===//
#include "kernels/Reducers.h"
#include "kernels/Workspace.h"
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/ReductionWorkspace.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace memc::kernels {

namespace {

/// log(sum) + max of the elements seen: sum(exp(x)) = exp(max) * sum(exp(x - max)).
struct ScaledExpSum {
  float max, sum;
};

template <typename T> struct LogSumExpReducer {
  using Acc = ScaledExpSum;
  static Acc init() { return {-std::numeric_limits<float>::infinity(), 0.0f}; }
  static Acc add(Acc acc, float value) { return combine(acc, {value, 1.0f}); }
  static Acc combine(Acc a, Acc b) {
    if (a.max != a.max || b.max != b.max)
      return {std::numeric_limits<float>::quiet_NaN(), 1.0f};
    if (a.max < b.max)
      std::swap(a, b);
    if (b.max == -std::numeric_limits<float>::infinity())
      return a; // nothing to add (an empty part, or exp(-inf) = 0)
    if (a.max == std::numeric_limits<float>::infinity())
      return {a.max, 1.0f}; // inf - inf must not make a NaN
    return {a.max, a.sum + b.sum * vectormath::exp(b.max - a.max)};
  }
  static T finish(Acc acc, int64_t) { return Element<T>::store(acc.max + std::log(acc.sum)); }
};

int64_t offsetOf(const Shape &dims, const Shape &strides, int64_t linear) {
  int64_t offset = 0;
  for (size_t d = dims.size(); d-- > 0;) {
    offset += (linear % dims[d]) * strides[d];
    linear /= dims[d];
  }
  return offset;
}

/// Calls fn(offset, count, stride) for maximal runs of the linear range [begin, end) of a
/// strided index space along its last dimension.
template <typename Fn>
void walkRuns(const Shape &dims, const Shape &strides, int64_t begin, int64_t end, Fn &&fn) {
  int64_t inner = dims.back(), stride = strides.back();
  for (int64_t position = begin; position < end;) {
    int64_t within = position % inner;
    int64_t count = std::min(inner - within, end - position);
    int64_t base = offsetOf(dims, strides, position);
    fn(base, count, stride);
    position += count;
  }
}

/// `partials` holds partialResults(layout) accumulators of 8 bytes.
template <typename T, typename Reducer>
void reduce(const ReductionLayout &layout, const T *x, T *y, uint64_t *partialSlots) {
  using Acc = typename Reducer::Acc;
  static_assert(sizeof(Acc) <= sizeof(uint64_t) && alignof(Acc) <= alignof(uint64_t));
  int64_t width = layout.width;
  int64_t blockWidth = std::min(width, kWidthBlock);
  int64_t widthBlocks = (width + blockWidth - 1) / blockWidth;
  int64_t tasks = (layout.outputs / width) * widthBlocks;

  // Task t covers outputs [first(t), first(t) + size(t)).
  auto first = [&](int64_t task) {
    return (task / widthBlocks) * width + (task % widthBlocks) * blockWidth;
  };
  auto size = [&](int64_t task) {
    return std::min(blockWidth, width - (task % widthBlocks) * blockWidth);
  };
  // Accumulates reduced positions [rb, re) of one task's outputs into acc[0, size(task)).
  auto accumulate = [&](int64_t task, int64_t rb, int64_t re, Acc *acc) {
    int64_t outputs = size(task);
    const T *base = x + offsetOf(layout.outerDims, layout.outerStrides, task / widthBlocks) +
                    (task % widthBlocks) * blockWidth;
    std::fill(acc, acc + outputs, Reducer::init());
    walkRuns(layout.reducedDims, layout.reducedStrides, rb, re,
             [&](int64_t offset, int64_t count, int64_t stride) {
               const T *p = base + offset;
               if (outputs == 1 && stride == 1) {
                 // Lambdas, not the member functions' pointers: GCC called those per element.
                 auto add = [](Acc a, ComputeOf<T> value) { return Reducer::add(a, value); };
                 auto combine = [](Acc a, Acc b) { return Reducer::combine(a, b); };
                 acc[0] = Reducer::combine(acc[0],
                                           foldLanes<Acc>(p, count, Reducer::init(), add, combine));
                 return;
               }
               if (outputs == 1) {
                 Acc a = acc[0];
                 for (int64_t i = 0; i < count; ++i)
                   a = Reducer::add(a, Element<T>::load(p[i * stride]));
                 acc[0] = a;
                 return;
               }
               for (int64_t i = 0; i < count; ++i)
                 for (int64_t w = 0; w < outputs; ++w)
                   acc[w] = Reducer::add(acc[w], Element<T>::load(p[i * stride + w]));
             });
  };
  auto store = [&](int64_t task, const Acc *acc) {
    for (int64_t w = 0, outputs = size(task); w < outputs; ++w)
      y[first(task) + w] = Reducer::finish(acc[w], layout.count);
  };

  int64_t reduceBlocks = 1;
  if (partialResults(layout) > 0)
    reduceBlocks = (layout.count + kReduceBlock - 1) / kReduceBlock;
  if (reduceBlocks == 1) {
    int64_t grain = std::max<int64_t>(1, kElementwiseGrain / (layout.count * blockWidth + 1));
    parallelFor(0, tasks, grain, [&](int64_t begin, int64_t end) {
      std::vector<Acc> acc(blockWidth);
      for (int64_t task = begin; task < end; ++task) {
        accumulate(task, 0, layout.count, acc.data());
        store(task, acc.data());
      }
    });
    return;
  }
  Acc *partials = reinterpret_cast<Acc *>(partialSlots);
  parallelFor(0, tasks * reduceBlocks, 1, [&](int64_t begin, int64_t end) {
    for (int64_t unit = begin; unit < end; ++unit) {
      int64_t task = unit / reduceBlocks, block = unit % reduceBlocks;
      int64_t rb = block * kReduceBlock, re = std::min(layout.count, rb + kReduceBlock);
      accumulate(task, rb, re, &partials[unit * blockWidth]);
    }
  });
  for (int64_t task = 0; task < tasks; ++task) {
    Acc *total = &partials[task * reduceBlocks * blockWidth];
    for (int64_t block = 1; block < reduceBlocks; ++block)
      for (int64_t w = 0; w < blockWidth; ++w)
        total[w] = Reducer::combine(total[w], total[block * blockWidth + w]);
    store(task, total);
  }
}

template <template <typename> class Reducer, bool FloatOnly = false>
bool runReduce(KernelContext &context, const KernelCall &call) {
  ReductionLayout layout = layoutOf(call);
  if (layout.outputs == 0)
    return true;
  WorkspaceCarver carver(call);
  uint64_t *partials = carveReduce(call, carver);
  if (!carver.fits(context))
    return false;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    reduce<T, Reducer<T>>(layout, call.inputs[0].as<T>(), call.outputs[0].as<T>(), partials);
  };
  if constexpr (FloatOnly)
    visitFloat(call.inputs[0].dtype, run);
  else
    visitNumeric(call.inputs[0].dtype, run);
  return true;
}

} // namespace

void addReductionKernels(KernelRuns &table) {
  table["reduce_sum"] = &runReduce<SumReducer>;
  table["reduce_mean"] = &runReduce<MeanReducer>;
  table["reduce_max"] = &runReduce<MaxReducer>;
  table["reduce_prod"] = &runReduce<ProdReducer>;
  table["reduce_l2"] = &runReduce<L2Reducer, /*FloatOnly=*/true>;
  table["reduce_log_sum_exp"] = &runReduce<LogSumExpReducer, /*FloatOnly=*/true>;
}

} // namespace memc::kernels
