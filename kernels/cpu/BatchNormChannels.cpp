//===- BatchNormChannels.cpp - batch norm's loops over one channel ---------===//
//
// Each loop is one run of `spatial` contiguous elements, cloned per instruction set; a channel
// is the runs of its N images, visited in image order.
//
//===----------------------------------------------------------------------===//
#include "kernels/cpu/BatchNormChannels.h"

#include "kernels/Float16.h"
#include "kernels/cpu/ElementTypes.h"
#include "kernels/cpu/VectorMath.h"

#include <cmath>

namespace memc::kernels {

namespace {

// Sums keep 8 f64 lanes in a vector register (two on AVX2): GCC does not vectorize an f64 sum
// over lanes kept in an array when the elements are widened from 16-bit floats. The tail of a
// run goes into lanes 0.. and the lanes are added lane 0 first, so every sum over the same run
// is the same number.
using F64x8 = double __attribute__((vector_size(64)));
using F32x8 = float __attribute__((vector_size(32)));
constexpr int64_t kWide = 8;

/// x[0, 8) widened to f64. (Vectors pass by reference: by value their ABI differs between the
/// clones, which GCC warns about, though these are always inlined.)
template <typename T> MEMC_VECTOR_INLINE F64x8 &loadWide(const T *x, F64x8 &wide) {
  F32x8 v;
  for (int64_t l = 0; l < kWide; ++l)
    v[l] = Element<T>::load(x[l]);
  wide = __builtin_convertvector(v, F64x8);
  return wide;
}

MEMC_VECTOR_INLINE double addLanes(const F64x8 &lanes) {
  double sum = lanes[0];
  for (int64_t l = 1; l < kWide; ++l)
    sum += lanes[l];
  return sum;
}

template <typename T> MEMC_VECTOR_CLONES double runSum(const T *x, int64_t n) {
  F64x8 lanes = {};
  int64_t i = 0;
  for (F64x8 wide; i + kWide <= n; i += kWide)
    lanes += loadWide(x + i, wide);
  for (int64_t l = 0; i < n; ++i, ++l)
    lanes[l] += Element<T>::load(x[i]);
  return addLanes(lanes);
}

template <typename T>
MEMC_VECTOR_CLONES double runSquaredDeviation(const T *x, int64_t n, double center) {
  F64x8 lanes = {};
  int64_t i = 0;
  for (F64x8 wide; i + kWide <= n; i += kWide) {
    F64x8 deviation = loadWide(x + i, wide) - center;
    lanes += deviation * deviation;
  }
  for (int64_t l = 0; i < n; ++i, ++l) {
    double deviation = Element<T>::load(x[i]) - center;
    lanes[l] += deviation * deviation;
  }
  return addLanes(lanes);
}

/// One fused multiply-add per element on every instruction set (the CUDA kernel's too), not
/// whatever the compiler contracts in one clone and not in another.
template <typename T>
MEMC_VECTOR_CLONES void runScaleShift(const T *x, T *y, int64_t n, float scale, float shift) {
  for (int64_t i = 0; i < n; ++i)
    y[i] = Element<T>::store(std::fma(Element<T>::load(x[i]), scale, shift));
}

/// Sums over one run: sum(x) exactly as runSum adds it, sum(dy) and sum(dy * x).
struct RunGradSums {
  double input, grad, product;
};

template <typename T>
MEMC_VECTOR_CLONES RunGradSums runGradSums(const T *dy, const T *x, int64_t n) {
  F64x8 input = {}, grad = {}, product = {};
  int64_t i = 0;
  for (F64x8 value, gradient; i + kWide <= n; i += kWide) {
    loadWide(x + i, value);
    loadWide(dy + i, gradient);
    input += value;
    grad += gradient;
    product += gradient * value; // exact: f32 times f32 fits an f64
  }
  for (int64_t l = 0; i < n; ++i, ++l) {
    double value = Element<T>::load(x[i]), gradient = Element<T>::load(dy[i]);
    input[l] += value;
    grad[l] += gradient;
    product[l] += gradient * value;
  }
  return {addLanes(input), addLanes(grad), addLanes(product)};
}

template <typename T>
MEMC_VECTOR_CLONES void runInputGrad(const T *dy, const T *x, T *dx, int64_t n, double mean,
                                     float meanGrad, float projection, float factor) {
  for (int64_t i = 0; i < n; ++i) {
    float centered = static_cast<float>(Element<T>::load(x[i]) - mean);
    float grad = Element<T>::load(dy[i]);
    dx[i] = Element<T>::store((grad - meanGrad - centered * projection) * factor);
  }
}

} // namespace

ChannelRuns::ChannelRuns(const TensorView &tensor)
    : batch(tensor.shape[0]), channels(tensor.shape[1]), spatial(1) {
  for (size_t d = 2; d < tensor.shape.size(); ++d)
    spatial *= tensor.shape[d];
}

/// The variance from the squared deviations from `mean`, a second pass over the channel.
template <typename T>
ChannelMoments aboutMean(const T *x, const ChannelRuns &runs, int64_t c, double mean) {
  double squares = 0.0;
  for (int64_t n = 0; n < runs.batch; ++n)
    squares += runSquaredDeviation(x + runs.start(n, c), runs.spatial, mean);
  return {mean, squares / runs.perChannel()};
}

template <typename T>
ChannelMoments channelMoments(const T *x, const ChannelRuns &runs, int64_t c) {
  double sum = 0.0;
  for (int64_t n = 0; n < runs.batch; ++n)
    sum += runSum(x + runs.start(n, c), runs.spatial);
  return aboutMean(x, runs, c, sum / runs.perChannel());
}

template <typename T>
void scaleShiftChannel(const T *x, T *y, const ChannelRuns &runs, int64_t c, float scale,
                       float shift) {
  for (int64_t n = 0; n < runs.batch; ++n)
    runScaleShift(x + runs.start(n, c), y + runs.start(n, c), runs.spatial, scale, shift);
}

template <typename T>
ChannelGradSums channelGradSums(const T *dy, const T *x, const ChannelRuns &runs, int64_t c) {
  RunGradSums sums{0.0, 0.0, 0.0};
  for (int64_t n = 0; n < runs.batch; ++n) {
    RunGradSums run = runGradSums(dy + runs.start(n, c), x + runs.start(n, c), runs.spatial);
    sums.input += run.input;
    sums.grad += run.grad;
    sums.product += run.product;
  }
  ChannelMoments moments = aboutMean(x, runs, c, sums.input / runs.perChannel());
  // sum(dy * (x - mean)) = sum(dy * x) - mean * sum(dy): in f64, the cancellation costs nothing
  // an f32 result keeps, and the pass over dy and x with (x - mean) is saved.
  return {moments, sums.grad, sums.product - moments.mean * sums.grad};
}

template <typename T>
void channelInputGrad(const T *dy, const T *x, T *dx, const ChannelRuns &runs, int64_t c,
                      double mean, float meanGrad, float projection, float factor) {
  for (int64_t n = 0; n < runs.batch; ++n) {
    int64_t start = runs.start(n, c);
    runInputGrad(dy + start, x + start, dx + start, runs.spatial, mean, meanGrad, projection,
                 factor);
  }
}

#define MEMC_BATCH_NORM_CHANNELS(T)                                                                \
  template ChannelMoments channelMoments(const T *, const ChannelRuns &, int64_t);                 \
  template void scaleShiftChannel(const T *, T *, const ChannelRuns &, int64_t, float, float);     \
  template ChannelGradSums channelGradSums(const T *, const T *, const ChannelRuns &, int64_t);    \
  template void channelInputGrad(const T *, const T *, T *, const ChannelRuns &, int64_t, double,  \
                                 float, float, float);
MEMC_BATCH_NORM_CHANNELS(float)
MEMC_BATCH_NORM_CHANNELS(Half)
MEMC_BATCH_NORM_CHANNELS(BFloat16)
#undef MEMC_BATCH_NORM_CHANNELS

} // namespace memc::kernels
