//===- RowMath.h - the arithmetic of the CUDA row kernels -------*- C++ -*-===//
//
// What one row of softmax, log_softmax, layer_norm, rms_norm, their gradients and cross_entropy
// computes, and one channel of batch_norm and its gradient, as MEMC_HOST_DEVICE functions: the
// CUDA kernels (Softmax.cu, RowNorm.cu, BatchNorm.cu, CrossEntropy.cu) call them from device
// code and RowMathTest.cpp runs them on the host against the CPU kernels of the same ops.
//
// A row is reached through an accessor (load(j) as f32, store(j, value) rounded to the storage
// type). The serial row functions (softmaxRow, normalizeRow, ...) compose the element formulas
// and statistics in the kernels' order: softmax's run on the device where a thread owns a row
// (along a non-innermost axis, or shorter than a warp); where a block shares a row, the kernel
// splits the same sums over its threads and combines them in a fixed tree, and the serial
// functions are the host tests' form of that row. Numerics follow the CPU kernels
// (kernels/cpu/Normalization.cpp and friends) step for step: elements in f32, every sum in f64
// (only its order differs from the CPU's), the row maximum first, the biased variance from a
// second pass about an f64 mean, x - mean taken in f64 (an f32 mean would cost a row whose mean
// is large next to its spread the spread's precision), the f64 results rounded to f32 where the
// CPU rounds them, and f16 and bf16 rounded once at the store. batch_norm's statistics combine
// per-thread (Welford) and per-block (Chan) moments in f64, so that its many blocks per channel
// need one pass.
//
// The group's code lives in memc::kernels::cuda::rows, so that its helpers' names (Add, Min,
// ...) cannot meet another group's.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_ROWMATH_H
#define MEMC_KERNELS_CUDA_ROWMATH_H

#include "kernels/DTypeTable.h"
#include "kernels/HostDevice.h"
#include "kernels/StoredElement.h"

#include <cmath>
#include <cstdint>
#include <limits>

namespace memc::kernels::cuda::rows {

//===----------------------------------------------------------------------===//
// Stored values
//===----------------------------------------------------------------------===//

/// Elements data[j * stride] of one row of a float tensor (T may be const for an input).
template <typename T> struct RowOf {
  T *data;
  int64_t stride;

  MEMC_HOST_DEVICE float load(int64_t j) const { return loadFloat(data, j * stride); }
  MEMC_HOST_DEVICE void store(int64_t j, float value) const { storeFloat(data, j * stride, value); }
};

/// Element m of one channel of an [N, C, spatial...] tensor: m = n * spatial + s.
template <typename T> struct ChannelOf {
  T *data;
  int64_t channels, spatial, channel;

  MEMC_HOST_DEVICE int64_t offset(int64_t m) const {
    return ((m / spatial) * channels + channel) * spatial + m % spatial;
  }
  MEMC_HOST_DEVICE float load(int64_t m) const { return loadFloat(data, offset(m)); }
  MEMC_HOST_DEVICE void store(int64_t m, float value) const { storeFloat(data, offset(m), value); }
};

/// A float vector whose type is known at run time: the scale, bias and statistics of a
/// normalization, which may have a float type of their own. Null data reads as zeros (an
/// absent bias).
struct FloatVector {
  const void *data;
  DType dtype;

  MEMC_HOST_DEVICE float load(int64_t j) const {
    if (!data)
      return 0.0f;
    switch (dtype) {
    case DType::F16:
      return halfToFloat(static_cast<const uint16_t *>(data)[j]);
    case DType::BF16:
      return bfloat16ToFloat(static_cast<const uint16_t *>(data)[j]);
    default:
      return static_cast<const float *>(data)[j];
    }
  }
};

/// The same for an output (a parameter gradient), rounded to its type.
struct MutableFloatVector {
  void *data;
  DType dtype;

  MEMC_HOST_DEVICE void store(int64_t j, float value) const {
    switch (dtype) {
    case DType::F16:
      static_cast<uint16_t *>(data)[j] = floatToHalf(value);
      break;
    case DType::BF16:
      static_cast<uint16_t *>(data)[j] = floatToBFloat16(value);
      break;
    default:
      static_cast<float *>(data)[j] = value;
    }
  }
};

/// Integer labels, i32 or i64 as the tensor stores them.
struct IndexVector {
  const void *data;
  bool wide;

  MEMC_HOST_DEVICE int64_t load(int64_t i) const {
    return wide ? static_cast<const int64_t *>(data)[i] : static_cast<const int32_t *>(data)[i];
  }
};

//===----------------------------------------------------------------------===//
// Combining partial results (the kernels' tree reductions)
//===----------------------------------------------------------------------===//

/// Lanes of a CUDA warp, which reduces its values with shuffles.
constexpr int kWarpSize = 32;

struct Add {
  template <typename V> MEMC_HOST_DEVICE V operator()(V a, V b) const { return a + b; }
};

/// The larger, NaNs skipped (softmax's and cross_entropy's row maximum, as the CPU's maxOf).
MEMC_HOST_DEVICE inline float maxSkippingNaN(float max, float x) { return x > max ? x : max; }

struct MaxSkippingNaN {
  MEMC_HOST_DEVICE float operator()(float a, float b) const { return maxSkippingNaN(a, b); }
};

struct Min {
  MEMC_HOST_DEVICE int64_t operator()(int64_t a, int64_t b) const { return b < a ? b : a; }
};

constexpr float kNegativeInfinity = -std::numeric_limits<float>::infinity();

//===----------------------------------------------------------------------===//
// softmax, log_softmax and their gradients
//===----------------------------------------------------------------------===//

/// A row's maximum (NaNs skipped) and sum of e^(x - max).
struct SoftmaxStatistics {
  float max;
  double sum;
};

/// What turns e^(x - max) into the output: 1 / sum (softmax) or log(sum) (log_softmax).
template <bool Log> MEMC_HOST_DEVICE float softmaxScale(double sum) {
  return static_cast<float>(Log ? log(sum) : 1.0 / sum);
}

template <bool Log> MEMC_HOST_DEVICE float softmaxOutput(float x, float max, float scale) {
  if constexpr (Log)
    return (x - max) - scale;
  else
    return expf(x - max) * scale;
}

template <typename Row>
MEMC_HOST_DEVICE SoftmaxStatistics softmaxStatistics(const Row &x, int64_t n) {
  float max = kNegativeInfinity;
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j)
    max = maxSkippingNaN(max, x.load(j));
  for (int64_t j = 0; j < n; ++j)
    sum += expf(x.load(j) - max);
  return {max, sum};
}

/// Softmax (or log-softmax) of a row of n elements into y (y may be x).
template <bool Log, typename In, typename Out>
MEMC_HOST_DEVICE void softmaxRow(const In &x, const Out &y, int64_t n) {
  SoftmaxStatistics statistics = softmaxStatistics(x, n);
  float scale = softmaxScale<Log>(statistics.sum);
  for (int64_t j = 0; j < n; ++j)
    y.store(j, softmaxOutput<Log>(x.load(j), statistics.max, scale));
}

/// A term of the row sum a gradient needs, from the output y: sum(dy * y) (softmax) or sum(dy).
template <bool Log> MEMC_HOST_DEVICE double softmaxGradTerm(float dy, float y) {
  return Log ? static_cast<double>(dy) : static_cast<double>(dy) * y;
}

/// softmax: y * (dy - sum); log_softmax: dy - e^y * sum, with the sum rounded to f32.
template <bool Log> MEMC_HOST_DEVICE float softmaxGradOutput(float dy, float y, float sum) {
  if constexpr (Log)
    return dy - expf(y) * sum;
  else
    return y * (dy - sum);
}

/// The gradient of one row from dy and the forward output y, into dx (dx may be either).
template <bool Log, typename In, typename Out>
MEMC_HOST_DEVICE void softmaxGradRow(const In &dy, const In &y, const Out &dx, int64_t n) {
  double sum = 0.0;
  for (int64_t j = 0; j < n; ++j)
    sum += softmaxGradTerm<Log>(dy.load(j), y.load(j));
  auto rounded = static_cast<float>(sum);
  for (int64_t j = 0; j < n; ++j)
    dx.store(j, softmaxGradOutput<Log>(dy.load(j), y.load(j), rounded));
}

//===----------------------------------------------------------------------===//
// layer_norm, add_layer_norm, rms_norm and their gradients
//===----------------------------------------------------------------------===//

/// A normalized row's mean (0 for rms_norm) and 1 / sqrt(variance + epsilon).
struct RowStatistics {
  double mean, rstd;
};

/// 1 / sqrt(squares / count + epsilon): the biased variance's reciprocal deviation.
MEMC_HOST_DEVICE inline double inverseDeviation(double squares, int64_t count, double epsilon) {
  return 1.0 / sqrt(squares / static_cast<double>(count) + epsilon);
}

/// (x - center)^2 in f64: a term of the second pass about the mean.
MEMC_HOST_DEVICE inline double squaredDeviation(float x, double center) {
  double d = static_cast<double>(x) - center;
  return d * d;
}

/// The mean (`Centered`; rms_norm's is 0) and the deviation from a second pass about it.
template <bool Centered, typename Row>
MEMC_HOST_DEVICE RowStatistics rowStatistics(const Row &x, int64_t n, double epsilon) {
  double mean = 0.0, squares = 0.0;
  if constexpr (Centered) {
    for (int64_t j = 0; j < n; ++j)
      mean += x.load(j);
    mean /= static_cast<double>(n);
  }
  for (int64_t j = 0; j < n; ++j)
    squares += squaredDeviation(x.load(j), mean);
  return {mean, inverseDeviation(squares, n, epsilon)};
}

/// x^ = (x - mean) * rstd, in f64 and rounded to f32.
MEMC_HOST_DEVICE inline float normalized(float x, RowStatistics statistics) {
  return static_cast<float>((static_cast<double>(x) - statistics.mean) * statistics.rstd);
}

/// layer_norm's x^ * scale + bias; rms_norm's bias is absent (zero).
MEMC_HOST_DEVICE inline float normalizedOutput(float x, RowStatistics statistics, float scale,
                                               float bias) {
  return normalized(x, statistics) * scale + bias;
}

/// add_layer_norm's residual sum, rounded to T as an add's result is (and normalized as stored).
template <typename T> MEMC_HOST_DEVICE T residualSum(T lhs, T rhs) {
  return Element<T>::store(Element<T>::load(lhs) + Element<T>::load(rhs));
}

/// layer_norm (`Centered`, bias optional) or rms_norm of one row into y (y may be x).
template <bool Centered, typename In, typename Out>
MEMC_HOST_DEVICE void normalizeRow(const In &x, const FloatVector &scale, const FloatVector &bias,
                                   const Out &y, int64_t n, double epsilon) {
  RowStatistics statistics = rowStatistics<Centered>(x, n, epsilon);
  for (int64_t j = 0; j < n; ++j)
    y.store(j, normalizedOutput(x.load(j), statistics, scale.load(j), bias.load(j)));
}

/// The row sums a normalization's dx needs: sum(dy * g) and sum(dy * g * x^).
struct NormGradSums {
  double scaled, projection;

  MEMC_HOST_DEVICE NormGradSums operator+(NormGradSums other) const {
    return {scaled + other.scaled, projection + other.projection};
  }
};

/// The terms of those sums: the products in f32, as the CPU forms them, summed in f64.
MEMC_HOST_DEVICE inline NormGradSums normGradTerms(float dy, float x, float scale,
                                                   RowStatistics statistics) {
  float scaled = dy * scale;
  return {scaled, static_cast<double>(scaled) * normalized(x, statistics)};
}

/// dx = rstd * (dy * g - mean(dy * g) - x^ * mean(dy * g * x^)); rms_norm (not `Centered`)
/// drops the mean(dy * g) term. The means and rstd are rounded to f32 first.
template <bool Centered>
MEMC_HOST_DEVICE float normGradInput(float dy, float x, float scale, RowStatistics statistics,
                                     NormGradSums sums, int64_t n) {
  auto count = static_cast<double>(n);
  float meanScaled = Centered ? static_cast<float>(sums.scaled / count) : 0.0f;
  auto meanProjection = static_cast<float>(sums.projection / count);
  auto factor = static_cast<float>(statistics.rstd);
  return factor * (dy * scale - meanScaled - normalized(x, statistics) * meanProjection);
}

/// One row's contribution to dscale[j] (dy * x^), in f64; dbias[j] sums dy itself.
MEMC_HOST_DEVICE inline double scaleGradTerm(float dy, float x, RowStatistics statistics) {
  return static_cast<double>(dy) * normalized(x, statistics);
}

/// One row's dx (the parameter gradients are sums over rows, apart).
template <bool Centered, typename In, typename Out>
MEMC_HOST_DEVICE void normGradRow(const In &dy, const In &x, const FloatVector &scale,
                                  const Out &dx, int64_t n, double epsilon) {
  RowStatistics statistics = rowStatistics<Centered>(x, n, epsilon);
  NormGradSums sums = {0.0, 0.0};
  for (int64_t j = 0; j < n; ++j)
    sums = sums + normGradTerms(dy.load(j), x.load(j), scale.load(j), statistics);
  for (int64_t j = 0; j < n; ++j)
    dx.store(j, normGradInput<Centered>(dy.load(j), x.load(j), scale.load(j), statistics, sums, n));
}

//===----------------------------------------------------------------------===//
// batch_norm and its gradient
//===----------------------------------------------------------------------===//

/// Count, mean and sum of squared deviations of the values seen, in f64 (as the CPU's two
/// passes): Welford's update per value, Chan's combination of two parts (exact in exact
/// arithmetic, stable in floating point).
struct Moments {
  int64_t count;
  double mean, m2;

  MEMC_HOST_DEVICE static Moments none() { return {0, 0.0, 0.0}; }

  MEMC_HOST_DEVICE void add(float value) {
    auto x = static_cast<double>(value);
    ++count;
    double delta = x - mean;
    mean += delta / static_cast<double>(count);
    m2 += delta * (x - mean);
  }

  MEMC_HOST_DEVICE static Moments combine(Moments a, Moments b) {
    if (b.count == 0)
      return a;
    if (a.count == 0)
      return b;
    int64_t count = a.count + b.count;
    double delta = b.mean - a.mean;
    double share = static_cast<double>(b.count) / static_cast<double>(count);
    return {count, a.mean + delta * share,
            a.m2 + b.m2 + delta * delta * static_cast<double>(a.count) * share};
  }

  /// The biased variance.
  MEMC_HOST_DEVICE double variance() const { return m2 / static_cast<double>(count); }
};

struct CombineMoments {
  MEMC_HOST_DEVICE Moments operator()(Moments a, Moments b) const { return Moments::combine(a, b); }
};

/// y = x * a + b per channel, as PyTorch folds batch_norm.
struct BatchNormCoefficients {
  float a, b;
};

/// a and b from the channel's statistics in f64, each rounded to f32 once.
MEMC_HOST_DEVICE inline BatchNormCoefficients
batchNormCoefficients(double mean, double variance, float scale, float bias, double epsilon) {
  double alpha = scale / sqrt(variance + epsilon);
  return {static_cast<float>(alpha), static_cast<float>(bias - mean * alpha)};
}

/// One fused multiply-add, as the CPU kernel computes it, whether or not a compiler contracts.
MEMC_HOST_DEVICE inline float batchNormOutput(float x, BatchNormCoefficients c) {
  return fmaf(x, c.a, c.b);
}

/// The moments of one channel's values, in order (a kernel block's part of a channel).
template <typename Channel>
MEMC_HOST_DEVICE Moments channelMoments(const Channel &x, int64_t begin, int64_t end) {
  Moments moments = Moments::none();
  for (int64_t m = begin; m < end; ++m)
    moments.add(x.load(m));
  return moments;
}

/// A channel's sum(dy) and sum(dy * (x - mean)), in f64.
struct BatchNormGradSums {
  double dy, dot;

  MEMC_HOST_DEVICE BatchNormGradSums operator+(BatchNormGradSums other) const {
    return {dy + other.dy, dot + other.dot};
  }
};

MEMC_HOST_DEVICE inline BatchNormGradSums batchNormGradTerms(float dy, float x, double mean) {
  return {dy, dy * (static_cast<double>(x) - mean)};
}

/// dx = (dy - mean(dy) - (x - mean) * projection) * factor, with projection = dot * rstd^2 / M
/// and factor = rstd * scale (computed in f64, rounded to f32); dscale = dot * rstd and
/// dbias = sum(dy).
struct BatchNormGradCoefficients {
  double mean;
  float meanDy, projection, factor;
};

MEMC_HOST_DEVICE inline BatchNormGradCoefficients
batchNormGradCoefficients(Moments moments, double epsilon, float scale, BatchNormGradSums sums) {
  double rstd = inverseDeviation(moments.m2, moments.count, epsilon);
  auto count = static_cast<double>(moments.count);
  return {moments.mean, static_cast<float>(sums.dy / count),
          static_cast<float>(sums.dot * rstd * rstd / count), static_cast<float>(rstd * scale)};
}

/// dscale: 0 for a channel without values (N * spatial = 0), as the CPU's.
MEMC_HOST_DEVICE inline float batchNormScaleGrad(Moments moments, double epsilon,
                                                 BatchNormGradSums sums) {
  if (moments.count == 0)
    return 0.0f;
  return static_cast<float>(sums.dot * inverseDeviation(moments.m2, moments.count, epsilon));
}

/// x - mean in f64, rounded to f32; the rest in f32.
MEMC_HOST_DEVICE inline float batchNormGradInput(float dy, float x, BatchNormGradCoefficients c) {
  auto centered = static_cast<float>(static_cast<double>(x) - c.mean);
  return (dy - c.meanDy - centered * c.projection) * c.factor;
}

//===----------------------------------------------------------------------===//
// cross_entropy and its gradient
//===----------------------------------------------------------------------===//

/// targetOf's answers for rows that have no class.
constexpr int64_t kIgnoredRow = -1;
constexpr int64_t kLabelOutsideClasses = -2;

/// The class a label selects, or kIgnoredRow (ignore_index) or kLabelOutsideClasses.
MEMC_HOST_DEVICE inline int64_t targetOf(int64_t label, int64_t classes, int64_t ignoreIndex) {
  if (label == ignoreIndex)
    return kIgnoredRow;
  return label >= 0 && label < classes ? label : kLabelOutsideClasses;
}

/// A counted row's loss: logsumexp(row) - row[target], in f64.
MEMC_HOST_DEVICE inline double crossEntropyLoss(SoftmaxStatistics statistics, float atTarget) {
  return log(statistics.sum) + statistics.max - atTarget;
}

/// The mean over counted rows; 0 when every row is ignored (PyTorch gives NaN there).
MEMC_HOST_DEVICE inline float crossEntropyMean(double total, int64_t counted) {
  return counted == 0 ? 0.0f : static_cast<float>(total / static_cast<double>(counted));
}

/// What the gradient of each counted row is scaled by: grad / counted (0 when none counts).
MEMC_HOST_DEVICE inline float crossEntropyGradScale(float grad, int64_t counted) {
  return counted == 0 ? 0.0f : grad / static_cast<float>(counted);
}

/// (softmax(row) - onehot(target)) * scale at one class, with factor = scale / sum.
MEMC_HOST_DEVICE inline float crossEntropyGradOutput(float x, float max, float factor,
                                                     bool atTarget, float scale) {
  float gradient = expf(x - max) * factor;
  return atTarget ? gradient - scale : gradient;
}

template <typename Row>
MEMC_HOST_DEVICE double crossEntropyRowLoss(const Row &x, int64_t classes, int64_t target) {
  return crossEntropyLoss(softmaxStatistics(x, classes), x.load(target));
}

/// One counted row's gradient into out (out may be x).
template <typename In, typename Out>
MEMC_HOST_DEVICE void crossEntropyGradRow(const In &x, const Out &out, int64_t classes,
                                          int64_t target, float scale) {
  SoftmaxStatistics statistics = softmaxStatistics(x, classes);
  auto factor = static_cast<float>(scale / statistics.sum);
  for (int64_t j = 0; j < classes; ++j)
    out.store(j, crossEntropyGradOutput(x.load(j), statistics.max, factor, j == target, scale));
}

} // namespace memc::kernels::cuda::rows

#endif // MEMC_KERNELS_CUDA_ROWMATH_H
