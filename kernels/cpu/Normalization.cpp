//===- Normalization.cpp - softmax, log_softmax, layer/rms/batch norm -----===//
//
// All compute in f32 with f64 sums (so f16/bf16 round once, at the store) and are threaded
// over independent rows or channels. Softmax subtracts the row maximum first; rms_norm is
// layer_norm's row loop about zero; add_layer_norm is layer_norm of the residual sum it
// writes; layer_norm and batch_norm (training) use the biased variance from a second pass over
// the data, which stays accurate when the mean is large next to the spread; batch_moments
// gives those batch statistics themselves (for the running ones), from the same channel loops
// (BatchNormChannels.h). Row loops run on f32 arrays cloned per instruction set with
// VectorMath's exp (f16/bf16 rows go through f32 chunks), so they vectorize.
//
// Scale, bias and statistics may have any float type, independently of the input (the ops
// allow it); they are small and read once into f32 arrays.
//
// Workspace: those f32 arrays, and for a softmax along a non-innermost axis one slot per
// concurrent piece of work (at most kMaxWorkspaceSlots) holding a block's maxima, sums and up
// to 2^20 exponentials.
//
//===----------------------------------------------------------------------===//
#include "kernels/Workspace.h"
#include "kernels/cpu/Accumulate.h"
#include "kernels/cpu/BatchNormPasses.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/KernelGroups.h"
#include "kernels/cpu/NormalizationWorkspace.h"
#include "kernels/cpu/ThreadPool.h"
#include "kernels/cpu/VectorMath.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace memc::kernels {

namespace {

//===----------------------------------------------------------------------===//
// softmax, log_softmax
//===----------------------------------------------------------------------===//

/// 16 f32 or 8 f64 lanes: one AVX-512 register, two AVX or four SSE ones. Reductions keep
/// their partial results in these explicitly: GCC does not vectorize a float max or sum folded
/// into one variable, since that reorders it.
using F32x16 = float __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));
using F64x8 = double __attribute__((vector_size(64)));

/// The largest of x[0, n) and `max`, NaNs skipped.
inline float maxOf(const float *x, int64_t n, float max) {
  F32x16 lanes = F32x16{} + max;
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    F32x16 v;
    std::memcpy(&v, x + i, sizeof v);
    lanes = v > lanes ? v : lanes;
  }
  for (; i < n; ++i)
    max = x[i] > max ? x[i] : max;
  for (int64_t l = 0; l < 16; ++l)
    max = lanes[l] > max ? lanes[l] : max;
  return max;
}

/// Sum over x[0, n) in f64 of x[i] or, if Squared, of (x[i] - center)^2: the same order of
/// additions on every instruction set.
template <bool Squared> double sumOf(const float *x, int64_t n, double center) {
  F64x8 low = {}, high = {};
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    F32x8 a, b;
    std::memcpy(&a, x + i, sizeof a);
    std::memcpy(&b, x + i + 8, sizeof b);
    F64x8 wideA = __builtin_convertvector(a, F64x8);
    F64x8 wideB = __builtin_convertvector(b, F64x8);
    if constexpr (Squared) {
      wideA = (wideA - center) * (wideA - center);
      wideB = (wideB - center) * (wideB - center);
    }
    low += wideA;
    high += wideB;
  }
  double sum = 0.0;
  for (; i < n; ++i) {
    double v = x[i];
    sum += Squared ? (v - center) * (v - center) : v;
  }
  for (int64_t l = 0; l < 8; ++l)
    sum += low[l] + high[l];
  return sum;
}

double sumOf(const float *x, int64_t n) { return sumOf<false>(x, n, 0.0); }

/// Softmax of one contiguous f32 row into y (y may be x: the exponentials go straight into y,
/// x[i] being read before y[i] is written).
MEMC_VECTOR_CLONES void softmaxFloatRow(const float *x, float *y, int64_t n) {
  float max = maxOf(x, n, -std::numeric_limits<float>::infinity());
  for (int64_t i = 0; i < n; ++i)
    y[i] = vectormath::exp(x[i] - max);
  auto scale = static_cast<float>(1.0 / sumOf(y, n));
  for (int64_t i = 0; i < n; ++i)
    y[i] *= scale;
}

/// Rows of other types (and log-softmax rows) are processed in f32 chunks of this many.
constexpr int64_t kSoftmaxChunk = 512;

/// Calls fn(chunk, offset, count) for the chunks of x[0, n) as f32: pieces of x for f32, else
/// converted copies.
template <typename T, typename Fn> void forEachFloatChunk(const T *x, int64_t n, Fn fn) {
  float converted[kSoftmaxChunk];
  for (int64_t offset = 0; offset < n; offset += kSoftmaxChunk) {
    int64_t count = std::min(kSoftmaxChunk, n - offset);
    if constexpr (std::is_same_v<T, float>) {
      fn(x + offset, offset, count);
    } else {
      for (int64_t i = 0; i < count; ++i)
        converted[i] = Element<T>::load(x[offset + i]);
      fn(static_cast<const float *>(converted), offset, count);
    }
  }
}

MEMC_VECTOR_CLONES float chunkMax(const float *x, int64_t n, float max) { return maxOf(x, n, max); }

/// Sum of e^(x[i] - max) over a chunk.
MEMC_VECTOR_CLONES double chunkSumExp(const float *x, int64_t n, float max) {
  float exps[kSoftmaxChunk];
  for (int64_t i = 0; i < n; ++i)
    exps[i] = vectormath::exp(x[i] - max);
  return sumOf(exps, n);
}

/// y[i] = e^(x[i] - max) * scale (softmax) or x[i] - max - scale (log-softmax) over a chunk.
template <bool Log>
MEMC_VECTOR_CLONES void chunkOutputs(const float *x, float *y, int64_t n, float max, float scale) {
  for (int64_t i = 0; i < n; ++i) {
    if constexpr (Log)
      y[i] = (x[i] - max) - scale;
    else
      y[i] = vectormath::exp(x[i] - max) * scale;
  }
}

/// Softmax (or log-softmax) of one contiguous row x[0, n) into y (y may be x).
template <typename T, bool Log> void softmaxRow(const T *x, T *y, int64_t n) {
  if constexpr (std::is_same_v<T, float> && !Log) {
    softmaxFloatRow(x, y, n);
    return;
  }
  float max = -std::numeric_limits<float>::infinity();
  forEachFloatChunk(x, n, [&](const float *chunk, int64_t, int64_t count) {
    max = chunkMax(chunk, count, max);
  });
  double sum = 0.0;
  forEachFloatChunk(x, n, [&](const float *chunk, int64_t, int64_t count) {
    sum += chunkSumExp(chunk, count, max);
  });
  auto scale = static_cast<float>(Log ? std::log(sum) : 1.0 / sum);
  forEachFloatChunk(x, n, [&](const float *chunk, int64_t offset, int64_t count) {
    if constexpr (std::is_same_v<T, float>) {
      chunkOutputs<Log>(chunk, y + offset, count, max, scale);
    } else {
      float out[kSoftmaxChunk];
      chunkOutputs<Log>(chunk, out, count, max, scale);
      for (int64_t i = 0; i < count; ++i)
        y[offset + i] = Element<T>::store(out[i]);
    }
  });
}

/// The same for `width` interleaved rows x[j * stride + c], c in [0, width): rows along a
/// non-innermost axis, vectorized across c.
template <typename T, bool Log>
void softmaxColumns(const T *x, T *y, int64_t length, int64_t stride, int64_t width,
                    float *scratch, float *maxima, double *sums) {
  std::fill(maxima, maxima + width, -std::numeric_limits<float>::infinity());
  std::fill(sums, sums + width, 0.0);
  bool keep = length * width <= kSoftmaxScratch;
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float v = Element<T>::load(x[j * stride + c]);
      maxima[c] = v > maxima[c] ? v : maxima[c];
    }
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float e = vectormath::exp(Element<T>::load(x[j * stride + c]) - maxima[c]);
      if (keep)
        scratch[j * width + c] = e;
      sums[c] += e;
    }
  for (int64_t j = 0; j < length; ++j)
    for (int64_t c = 0; c < width; ++c) {
      float v = Element<T>::load(x[j * stride + c]);
      float result;
      if constexpr (Log)
        result = v - maxima[c] - static_cast<float>(std::log(sums[c]));
      else
        result = (keep ? scratch[j * width + c] : vectormath::exp(v - maxima[c])) *
                 static_cast<float>(1.0 / sums[c]);
      y[j * stride + c] = Element<T>::store(result);
    }
}

template <bool Log> bool runSoftmax(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  if (input.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  SoftmaxScratch scratch = carveSoftmax(call, carver);
  if (!carver.fits(context))
    return false;
  SoftmaxTasks tasks(call);
  int64_t length = tasks.length, inner = tasks.inner, blocks = tasks.blocks;
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    parallelForSlots(0, tasks.count(), tasks.grain, [&](int64_t slot, int64_t begin, int64_t end) {
      for (int64_t task = begin; task < end; ++task) {
        int64_t o = task / blocks, c0 = (task % blocks) * kSoftmaxBlock;
        int64_t offset = o * length * inner + c0;
        if (inner == 1)
          softmaxRow<T, Log>(x + offset, y + offset, length);
        else
          softmaxColumns<T, Log>(x + offset, y + offset, length, inner,
                                 std::min(kSoftmaxBlock, inner - c0),
                                 scratch.exponentials + slot * scratch.exponentialStride,
                                 scratch.maxima + slot * kSoftmaxBlock,
                                 scratch.sums + slot * kSoftmaxBlock);
      }
    });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// layer_norm, rms_norm
//===----------------------------------------------------------------------===//

/// Layer norm (`Centered`) or RMS norm of one row of `width` elements into out (out may be in).
/// RMS norm is layer norm about zero instead of the mean, without a bias: the same sums with
/// mean = 0 give its mean square.
template <bool Centered, typename T>
MEMC_VECTOR_CLONES void normalizeRow(const T *in, T *out, int64_t width, const float *scale,
                                     const float *bias, double epsilon) {
  double mean = 0.0, squares;
  if constexpr (std::is_same_v<T, float>) {
    if constexpr (Centered)
      mean = sumOf(in, width) / width;
    squares = sumOf<true>(in, width, mean);
  } else {
    if constexpr (Centered)
      mean = sumLanes(in, width) / width;
    squares = squaredDeviationLanes(in, width, mean);
  }
  double rstd = 1.0 / std::sqrt(squares / width + epsilon);
  // Centered in f64: an f32 mean would cost the spread its precision when the mean is large
  // next to it.
  for (int64_t j = 0; j < width; ++j) {
    float normalized = static_cast<float>((Element<T>::load(in[j]) - mean) * rstd);
    if constexpr (Centered)
      out[j] = Element<T>::store(normalized * scale[j] + bias[j]);
    else
      out[j] = Element<T>::store(normalized * scale[j]);
  }
}

/// sum[j] = lhs[j] + rhs[j] over one row, rounded to T as an add's result is.
template <typename T>
MEMC_VECTOR_CLONES void addRow(const T *lhs, const T *rhs, T *sum, int64_t width) {
  for (int64_t j = 0; j < width; ++j)
    sum[j] = Element<T>::store(Element<T>::load(lhs[j]) + Element<T>::load(rhs[j]));
}

/// layer_norm (`Centered`: scale and optional bias) or rms_norm (scale) over the dimensions
/// axis..rank-1, threaded over rows. With `Residual` (add_layer_norm), each row is first the sum
/// of the two inputs, written to the first output, and normalized into the second from there
/// while it is in cache.
template <bool Centered, bool Residual = false>
bool runRowNormalization(KernelContext &context, const KernelCall &call) {
  constexpr size_t kScale = Residual ? 2 : 1;
  const TensorView &input = call.inputs[0];
  int64_t axis = attributesOf(call).intOr("axis", 0);
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  int64_t rows = product(input.shape, 0, axis);
  int64_t width = product(input.shape, axis, input.shape.size());
  if (input.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  AffineScratch scratch = !Centered ? carveRmsNorm(call, carver)
                          : Residual ? carveAddLayerNorm(call, carver)
                                     : carveLayerNorm(call, carver);
  if (!carver.fits(context))
    return false;
  const float *scale = loadAsFloat(call.inputs[kScale], scratch.scale);
  const float *bias = scratch.bias;
  if (Centered && call.inputs.size() > kScale + 1)
    loadAsFloat(call.inputs[kScale + 1], scratch.bias);
  else if (Centered)
    std::fill(scratch.bias, scratch.bias + width, 0.0f);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[Residual ? 1 : 0].as<T>();
    parallelFor(
        0, rows, std::max<int64_t>(1, kElementwiseGrain / width), [&](int64_t begin, int64_t end) {
          for (int64_t row = begin; row < end; ++row) {
            const T *in = x + row * width;
            if constexpr (Residual) {
              T *sum = call.outputs[0].as<T>() + row * width;
              addRow(in, call.inputs[1].as<T>() + row * width, sum, width);
              in = sum;
            }
            normalizeRow<Centered>(in, y + row * width, width, scale, bias, epsilon);
          }
        });
  });
  return true;
}

//===----------------------------------------------------------------------===//
// batch_norm
//===----------------------------------------------------------------------===//

/// batch_moments' two passes, as batch_norm in training starts: each plane's sum, then its
/// squared deviations from its channel's mean; after them each channel's mean and biased
/// variance into scratch.means and .variances.
template <typename T> struct MomentsPasses {
  const T *x;
  const ChannelRuns &runs;
  const BatchMomentsScratch &scratch;

  void pass(int k, int64_t begin, int64_t end) const {
    if (k == 0)
      planeSums(x, runs, begin, end, scratch.planeValues);
    else
      planeSquaredDeviations(x, runs, begin, end, scratch.means, scratch.planeValues);
  }
  void finish(int k, int64_t c) const {
    double total = channelTotal(scratch.planeValues, runs, c);
    (k == 0 ? scratch.means : scratch.variances)[c] =
        total / static_cast<double>(runs.perChannel());
  }
};

bool runBatchNorm(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  double epsilon = attributesOf(call).floatOr("epsilon", 0.0);
  bool training = attributesOf(call).intOr("training", 0) == 1;
  ChannelRuns runs(input);
  if (input.numElements() == 0)
    return true;
  WorkspaceCarver carver(call);
  BatchNormScratch scratch = carveBatchNorm(call, carver);
  if (!carver.fits(context))
    return false;
  int64_t channels = runs.channels;
  const float *scale = loadAsFloat(call.inputs[1], scratch.statistics);
  const float *bias = loadAsFloat(call.inputs[2], scratch.statistics + channels);
  const float *mean = loadAsFloat(call.inputs[3], scratch.statistics + 2 * channels);
  const float *var = loadAsFloat(call.inputs[4], scratch.statistics + 3 * channels);
  float *alpha = scratch.coefficients, *beta = scratch.coefficients + channels;
  // y = x * alpha + beta, as PyTorch folds it.
  auto coefficients = [&](int64_t c, double m, double v) {
    double a = scale[c] / std::sqrt(v + epsilon);
    alpha[c] = static_cast<float>(a);
    beta[c] = static_cast<float>(bias[c] - m * a);
  };
  if (!training)
    for (int64_t c = 0; c < channels; ++c)
      coefficients(c, mean[c], var[c]);
  visitFloat(input.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T *x = input.as<T>();
    T *y = call.outputs[0].as<T>();
    MomentsPasses<T> moments{x, runs, scratch.moments};
    // In training the moments' two passes, then y; in eval y alone.
    int first = training ? 0 : 2;
    runPlanePasses(
        runs, input.sizeBytes(), 3 - first,
        [&](int k, int64_t begin, int64_t end) {
          if (k + first < 2)
            moments.pass(k + first, begin, end);
          else
            scaleShiftPlanes(x, y, runs, begin, end, alpha, beta);
        },
        [&](int k, int64_t c) {
          if (k + first < 2)
            moments.finish(k + first, c);
          if (k + first == 1)
            coefficients(c, scratch.moments.means[c], scratch.moments.variances[c]);
        });
  });
  return true;
}

/// statistic[c] = value, rounded to the statistic's float type.
void storeStatistic(const TensorView &statistic, int64_t c, double value) {
  visitFloat(statistic.dtype, [&](auto tag) {
    storeFloat(statistic.as<typename decltype(tag)::type>(), c, static_cast<float>(value));
  });
}

/// The batch's per-channel mean and biased variance, as runBatchNorm computes them in training.
bool runBatchMoments(KernelContext &context, const KernelCall &call) {
  const TensorView &input = call.inputs[0];
  ChannelRuns runs(input);
  WorkspaceCarver carver(call);
  BatchMomentsScratch scratch = carveBatchMoments(call, carver);
  if (!carver.fits(context))
    return false;
  if (runs.perChannel() > 0)
    visitFloat(input.dtype, [&](auto tag) {
      MomentsPasses<typename decltype(tag)::type> moments{input.as<typename decltype(tag)::type>(),
                                                          runs, scratch};
      runPlanePasses(
          runs, input.sizeBytes(), 2,
          [&](int k, int64_t begin, int64_t end) { moments.pass(k, begin, end); },
          [&](int k, int64_t c) { moments.finish(k, c); });
    });
  for (int64_t c = 0; c < runs.channels; ++c) {
    // An empty batch has no statistics: NaN, as torch.var_mean gives.
    double nan = std::numeric_limits<double>::quiet_NaN();
    storeStatistic(call.outputs[0], c, runs.perChannel() > 0 ? scratch.means[c] : nan);
    storeStatistic(call.outputs[1], c, runs.perChannel() > 0 ? scratch.variances[c] : nan);
  }
  return true;
}

} // namespace

void addNormalizationKernels(KernelRuns &table) {
  table["softmax"] = &runSoftmax<false>;
  table["log_softmax"] = &runSoftmax<true>;
  table["layer_norm"] = &runRowNormalization<true>;
  table["add_layer_norm"] = &runRowNormalization<true, true>;
  table["rms_norm"] = &runRowNormalization<false>;
  table["batch_norm"] = &runBatchNorm;
  table["batch_moments"] = &runBatchMoments;
}

} // namespace memc::kernels
