//===- Reduction.cu - reduce_sum/mean/max/prod/l2/log_sum_exp on CUDA -----===//
//
// Any axes set, through the plan of ReductionMath.h (dimensions merged into kept and reduced
// groups, the reduced range cut into chunks when the outputs alone cannot fill the GPU):
//  - innermost dimensions reduced: a warp per (output, chunk), lanes striding the range so
//    that loads coalesce, then a warp reduction;
//  - innermost dimensions kept: a thread per (output, chunk), adjacent threads adjacent
//    outputs (a bias gradient: [B, S, H] over {0, 1}), walking its chunk serially; so are
//    reduced ranges shorter than a warp.
// With one chunk the first pass writes the outputs; otherwise it writes each chunk's
// accumulator to the workspace and a warp per output combines them, so the result does not
// depend on scheduling. The reducers are the CPU's (ReductionMath.h): f64 sums, products and
// squares for floats, f32 maxima and log-sum-exp, i64 with wrap-around for integers.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/RowKernels.cuh"
#include "kernels/cuda/RowWorkspace.h"

namespace memc::kernels::cuda::rows {
namespace {

template <typename Reducer> struct CombineWith {
  using Acc = typename Reducer::Acc;
  __device__ Acc operator()(Acc a, Acc b) const { return Reducer::combine(a, b); }
};

/// The accumulator of one output's chunk, or its result when the range is a single chunk.
template <typename T, typename Reducer>
__device__ void emit(typename Reducer::Acc acc, int64_t output, int64_t split,
                     const ReductionPlan &plan, T *y, typename Reducer::Acc *partials) {
  if (plan.splits == 1)
    y[output] = Reducer::finish(acc, plan.count);
  else
    partials[output * plan.splits + split] = acc;
}

template <typename T, typename Reducer>
__global__ void reduceByWarps(const T *x, T *y, typename Reducer::Acc *partials,
                              ReductionPlan plan) {
  using Acc = typename Reducer::Acc;
  int lane = threadIdx.x % kWarpSize;
  int64_t warps = gridThreads() / kWarpSize;
  int64_t units = plan.outputs * plan.splits;
  for (int64_t unit = gridThreadIndex() / kWarpSize; unit < units; unit += warps) {
    int64_t output = unit / plan.splits, split = unit % plan.splits;
    const T *base = x + plan.outputBase(output);
    Acc acc = Reducer::init();
    for (int64_t r = plan.chunkBegin(split) + lane; r < plan.chunkEnd(split); r += kWarpSize)
      acc = Reducer::add(acc, Element<T>::load(base[plan.reducedOffset(r)]));
    acc = warpAllReduce(acc, CombineWith<Reducer>{});
    if (lane == 0)
      emit<T, Reducer>(acc, output, split, plan, y, partials);
  }
}

template <typename T, typename Reducer>
__global__ void reduceByThreads(const T *x, T *y, typename Reducer::Acc *partials,
                                ReductionPlan plan) {
  using Acc = typename Reducer::Acc;
  int64_t units = plan.outputs * plan.splits;
  for (int64_t unit = gridThreadIndex(); unit < units; unit += gridThreads()) {
    int64_t split = unit / plan.outputs, output = unit % plan.outputs;
    const T *base = x + plan.outputBase(output);
    Acc acc = Reducer::init();
    for (int64_t r = plan.chunkBegin(split); r < plan.chunkEnd(split); ++r)
      acc = Reducer::add(acc, Element<T>::load(base[plan.reducedOffset(r)]));
    emit<T, Reducer>(acc, output, split, plan, y, partials);
  }
}

/// Each output's chunk accumulators combined by a warp, then finished.
template <typename T, typename Reducer>
__global__ void finishByWarps(const typename Reducer::Acc *partials, T *y, ReductionPlan plan) {
  using Acc = typename Reducer::Acc;
  int lane = threadIdx.x % kWarpSize;
  int64_t warps = gridThreads() / kWarpSize;
  for (int64_t output = gridThreadIndex() / kWarpSize; output < plan.outputs; output += warps) {
    Acc acc = Reducer::init();
    for (int64_t split = lane; split < plan.splits; split += kWarpSize)
      acc = Reducer::combine(acc, partials[output * plan.splits + split]);
    acc = warpAllReduce(acc, CombineWith<Reducer>{});
    if (lane == 0)
      y[output] = Reducer::finish(acc, plan.count);
  }
}

template <typename T, typename Reducer>
bool launchReduce(KernelContext &context, const KernelCall &call, const ReductionPlan &plan,
                  void *workspace, const char *name) {
  using Acc = typename Reducer::Acc;
  static_assert(sizeof(Acc) <= kPartialBytes, "a partial result takes kPartialBytes");
  const T *x = call.inputs[0].as<T>();
  T *y = call.outputs[0].as<T>();
  auto *partials = static_cast<Acc *>(workspace);
  cudaStream_t stream = streamOf(context);
  int64_t units = plan.outputs * plan.splits;
  if (plan.byWarps)
    reduceByWarps<T, Reducer>
        <<<gridFor(units * kWarpSize), kBlockThreads, 0, stream>>>(x, y, partials, plan);
  else
    reduceByThreads<T, Reducer><<<gridFor(units), kBlockThreads, 0, stream>>>(x, y, partials, plan);
  if (!launched(context, name))
    return false;
  if (plan.splits == 1)
    return true;
  finishByWarps<T, Reducer>
      <<<gridFor(plan.outputs * kWarpSize), kBlockThreads, 0, stream>>>(partials, y, plan);
  return launched(context, name);
}

/// A reduction over numeric types, or float types only (`FloatOnly`: l2, log_sum_exp).
template <template <typename> class Reducer, const char *Name, bool FloatOnly = false>
bool runReduce(KernelContext &context, const KernelCall &call) {
  ReductionPlan plan;
  if (!reductionPlanOf(call, plan))
    return context.fail(std::string(Name) + ": too many dimension groups for the CUDA kernel");
  if (plan.outputs == 0)
    return true;
  WorkspaceCarver carver(call);
  void *partials = carveReduction(call, carver);
  if (!carver.fits(context))
    return false;
  auto launch = [&](auto tag) {
    using T = typename decltype(tag)::type;
    return launchReduce<T, Reducer<T>>(context, call, plan, partials, Name);
  };
  if constexpr (FloatOnly)
    return visitFloat(call.inputs[0].dtype, launch);
  else
    return visitNumeric(call.inputs[0].dtype, launch);
}

} // namespace

void addReductionCudaKernels(CudaKernelRuns &runs) {
  runs[kReduceSum] = &runReduce<SumReducer, kReduceSum>;
  runs[kReduceMean] = &runReduce<MeanReducer, kReduceMean>;
  runs[kReduceMax] = &runReduce<MaxReducer, kReduceMax>;
  runs[kReduceProd] = &runReduce<ProdReducer, kReduceProd>;
  runs[kReduceL2] = &runReduce<L2Reducer, kReduceL2, /*FloatOnly=*/true>;
  runs[kReduceLogSumExp] = &runReduce<LogSumExpReducer, kReduceLogSumExp, /*FloatOnly=*/true>;
}

} // namespace memc::kernels::cuda::rows
