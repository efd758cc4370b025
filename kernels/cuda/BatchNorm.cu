//===- BatchNorm.cu - batch_norm, batch_norm_grad, batch_moments on CUDA --===//
//
// A channel's N * spatial values are cut into chunks (ChannelSplit), one block each, whose
// moments (Welford per thread, Chan across threads, RowMath.h) go into the workspace; later
// passes combine a channel's chunks in order, so the statistics do not depend on scheduling.
//  - batch_norm: each channel's y = x * a + b coefficients (from the batch's statistics when
//    training, from the mean and var inputs otherwise), then the outputs elementwise.
//  - batch_norm_grad (always the batch's statistics, as the CPU kernel): the moments; per
//    chunk, sum(dy) and sum(dy * (x - mean)); per channel, scale_grad, bias_grad and dx's
//    coefficients; then dx elementwise. Every pass reads the inputs before the last writes dx,
//    so dx may share the grad's or the input's buffer.
//  - batch_moments: the moments, then each channel's mean and biased variance.
// Statistics and sums are f64, as the CPU kernels' (kernels/cpu/Normalization.cpp); the
// elementwise passes use f32 coefficients rounded from them.
// The scale, bias, statistics and parameter gradients may have a float type of their own.
//
//===----------------------------------------------------------------------===//
#include "kernels/cuda/RowKernels.cuh"
#include "kernels/cuda/RowWorkspace.h"

namespace memc::kernels::cuda::rows {
namespace {

/// Block threads of the channel passes.
constexpr int kChannelThreads = 256;

/// moments[c * splits + s] of chunk s of channel c.
template <typename T>
__global__ void __launch_bounds__(kChannelThreads)
    chunkMoments(const T *x, ChannelSplit split, Moments *moments) {
  for (int64_t unit = blockIdx.x; unit < split.channels * split.splits; unit += gridDim.x) {
    int64_t channel = unit / split.splits, chunk = unit % split.splits;
    ChannelOf<const T> values{x, split.channels, split.spatial, channel};
    Moments part = Moments::none();
    for (int64_t m = split.chunkBegin(chunk) + threadIdx.x; m < split.chunkEnd(chunk);
         m += blockDim.x)
      part.add(values.load(m));
    part = blockAllReduce(part, CombineMoments{});
    if (threadIdx.x == 0)
      moments[unit] = part;
  }
}

/// A channel's moments from its chunks', in chunk order.
__device__ Moments channelMomentsOf(const Moments *chunks, int64_t splits) {
  Moments total = Moments::none();
  for (int64_t s = 0; s < splits; ++s)
    total = Moments::combine(total, chunks[s]);
  return total;
}

/// Each channel's y = x * a + b; from `moments` when training (not null), else from the
/// running mean and var.
__global__ void batchNormCoefficientsOf(const Moments *moments, int64_t splits, int64_t channels,
                                        FloatVector scale, FloatVector bias, FloatVector mean,
                                        FloatVector var, double epsilon,
                                        BatchNormCoefficients *coefficients) {
  for (int64_t c = gridThreadIndex(); c < channels; c += gridThreads()) {
    double channelMean = mean.load(c), channelVar = var.load(c);
    if (moments) {
      Moments batch = channelMomentsOf(moments + c * splits, splits);
      channelMean = batch.mean;
      channelVar = batch.variance();
    }
    coefficients[c] =
        batchNormCoefficients(channelMean, channelVar, scale.load(c), bias.load(c), epsilon);
  }
}

template <typename T>
__global__ void batchNormOutputs(const T *x, T *y, const BatchNormCoefficients *coefficients,
                                 int64_t channels, int64_t spatial, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    BatchNormCoefficients c = coefficients[(i / spatial) % channels];
    y[i] = Element<T>::store(batchNormOutput(Element<T>::load(x[i]), c));
  }
}

template <typename T>
bool launchBatchNorm(KernelContext &context, const KernelCall &call, const ChannelSplit &split,
                     const BatchNormScratch &scratch) {
  const T *x = call.inputs[0].as<T>();
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  cudaStream_t stream = streamOf(context);
  if (scratch.moments) {
    chunkMoments<T><<<blocksFor(split.channels * split.splits), kChannelThreads, 0, stream>>>(
        x, split, scratch.moments);
    if (!launched(context, "batch_norm"))
      return false;
  }
  batchNormCoefficientsOf<<<gridFor(split.channels), kBlockThreads, 0, stream>>>(
      scratch.moments, split.splits, split.channels, floatVector(call.inputs[1]),
      floatVector(call.inputs[2]), floatVector(call.inputs[3]), floatVector(call.inputs[4]),
      epsilon, scratch.coefficients);
  if (!launched(context, "batch_norm"))
    return false;
  int64_t count = call.inputs[0].numElements();
  batchNormOutputs<T><<<gridFor(count), kBlockThreads, 0, stream>>>(
      x, call.outputs[0].as<T>(), scratch.coefficients, split.channels, split.spatial, count);
  return launched(context, "batch_norm");
}

bool runBatchNorm(KernelContext &context, const KernelCall &call) {
  if (call.inputs[0].numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  BatchNormScratch scratch = carveBatchNorm(call, carver);
  if (!carver.fits(context))
    return false;
  ChannelSplit split(call.inputs[0]);
  return visitFloat(call.inputs[0].dtype, [&](auto tag) {
    return launchBatchNorm<typename decltype(tag)::type>(context, call, split, scratch);
  });
}

//===----------------------------------------------------------------------===//
// batch_norm_grad
//===----------------------------------------------------------------------===//

/// sums[c * splits + s]: sum(dy) and sum(dy * (x - mean)) over chunk s of channel c.
template <typename T>
__global__ void __launch_bounds__(kChannelThreads)
    chunkGradSums(const T *dy, const T *x, ChannelSplit split, const Moments *moments,
                  BatchNormGradSums *sums) {
  for (int64_t unit = blockIdx.x; unit < split.channels * split.splits; unit += gridDim.x) {
    int64_t channel = unit / split.splits, chunk = unit % split.splits;
    double mean = channelMomentsOf(moments + channel * split.splits, split.splits).mean;
    ChannelOf<const T> grad{dy, split.channels, split.spatial, channel};
    ChannelOf<const T> values{x, split.channels, split.spatial, channel};
    BatchNormGradSums part = {0.0, 0.0};
    for (int64_t m = split.chunkBegin(chunk) + threadIdx.x; m < split.chunkEnd(chunk);
         m += blockDim.x)
      part = part + batchNormGradTerms(grad.load(m), values.load(m), mean);
    part = blockAllReduce(part, Add{});
    if (threadIdx.x == 0)
      sums[unit] = part;
  }
}

/// Per channel: scale_grad, bias_grad and dx's coefficients, from the chunks in order.
__global__ void batchNormGradCoefficientsOf(const Moments *moments, const BatchNormGradSums *sums,
                                            int64_t splits, int64_t channels, FloatVector scale,
                                            double epsilon, MutableFloatVector scaleGrad,
                                            MutableFloatVector biasGrad,
                                            BatchNormGradCoefficients *coefficients) {
  for (int64_t c = gridThreadIndex(); c < channels; c += gridThreads()) {
    Moments batch = channelMomentsOf(moments + c * splits, splits);
    BatchNormGradSums total = {0.0, 0.0};
    for (int64_t s = 0; s < splits; ++s)
      total = total + sums[c * splits + s];
    scaleGrad.store(c, batchNormScaleGrad(batch, epsilon, total));
    biasGrad.store(c, static_cast<float>(total.dy));
    coefficients[c] = batchNormGradCoefficients(batch, epsilon, scale.load(c), total);
  }
}

template <typename T>
__global__ void batchNormGradInputs(const T *dy, const T *x, T *dx,
                                    const BatchNormGradCoefficients *coefficients, int64_t channels,
                                    int64_t spatial, int64_t count) {
  for (int64_t i = gridThreadIndex(); i < count; i += gridThreads()) {
    BatchNormGradCoefficients c = coefficients[(i / spatial) % channels];
    dx[i] =
        Element<T>::store(batchNormGradInput(Element<T>::load(dy[i]), Element<T>::load(x[i]), c));
  }
}

template <typename T>
bool launchBatchNormGrad(KernelContext &context, const KernelCall &call, const ChannelSplit &split,
                         const BatchNormGradScratch &scratch) {
  const T *dy = call.inputs[0].as<T>(), *x = call.inputs[1].as<T>();
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  cudaStream_t stream = streamOf(context);
  unsigned chunks = blocksFor(split.channels * split.splits);
  chunkMoments<T><<<chunks, kChannelThreads, 0, stream>>>(x, split, scratch.moments);
  if (!launched(context, "batch_norm_grad"))
    return false;
  chunkGradSums<T>
      <<<chunks, kChannelThreads, 0, stream>>>(dy, x, split, scratch.moments, scratch.sums);
  if (!launched(context, "batch_norm_grad"))
    return false;
  batchNormGradCoefficientsOf<<<gridFor(split.channels), kBlockThreads, 0, stream>>>(
      scratch.moments, scratch.sums, split.splits, split.channels, floatVector(call.inputs[2]),
      epsilon, mutableFloatVector(call.outputs[1]), mutableFloatVector(call.outputs[2]),
      scratch.coefficients);
  if (!launched(context, "batch_norm_grad"))
    return false;
  int64_t count = call.inputs[1].numElements();
  if (count == 0)
    return true;
  batchNormGradInputs<T><<<gridFor(count), kBlockThreads, 0, stream>>>(
      dy, x, call.outputs[0].as<T>(), scratch.coefficients, split.channels, split.spatial, count);
  return launched(context, "batch_norm_grad");
}

bool runBatchNormGrad(KernelContext &context, const KernelCall &call) {
  ChannelSplit split(call.inputs[1]);
  if (split.channels == 0)
    return true;
  WorkspaceCarver carver(call);
  BatchNormGradScratch scratch = carveBatchNormGrad(call, carver);
  if (!carver.fits(context))
    return false;
  return visitFloat(call.inputs[1].dtype, [&](auto tag) {
    return launchBatchNormGrad<typename decltype(tag)::type>(context, call, split, scratch);
  });
}

//===----------------------------------------------------------------------===//
// batch_moments
//===----------------------------------------------------------------------===//

__global__ void batchMomentsOf(const Moments *moments, int64_t splits, int64_t channels,
                               MutableFloatVector mean, MutableFloatVector variance) {
  for (int64_t c = gridThreadIndex(); c < channels; c += gridThreads()) {
    Moments batch = channelMomentsOf(moments + c * splits, splits);
    mean.store(c, static_cast<float>(batch.mean));
    variance.store(c, static_cast<float>(batch.variance()));
  }
}

bool runBatchMoments(KernelContext &context, const KernelCall &call) {
  ChannelSplit split(call.inputs[0]);
  if (split.channels == 0)
    return true;
  WorkspaceCarver carver(call);
  Moments *moments = carveBatchMoments(call, carver);
  if (!carver.fits(context))
    return false;
  cudaStream_t stream = streamOf(context);
  bool launchedMoments = visitFloat(call.inputs[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    chunkMoments<T><<<blocksFor(split.channels * split.splits), kChannelThreads, 0, stream>>>(
        call.inputs[0].as<T>(), split, moments);
    return launched(context, "batch_moments");
  });
  if (!launchedMoments)
    return false;
  batchMomentsOf<<<gridFor(split.channels), kBlockThreads, 0, stream>>>(
      moments, split.splits, split.channels, mutableFloatVector(call.outputs[0]),
      mutableFloatVector(call.outputs[1]));
  return launched(context, "batch_moments");
}

} // namespace

void addBatchNormCudaKernels(CudaKernelRuns &runs) {
  runs["batch_norm"] = &runBatchNorm;
  runs["batch_norm_grad"] = &runBatchNormGrad;
  runs["batch_moments"] = &runBatchMoments;
}

} // namespace memc::kernels::cuda::rows
