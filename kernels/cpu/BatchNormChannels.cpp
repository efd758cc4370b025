//===- BatchNormChannels.cpp - batch norm's loops over planes --------------===//
//
// Each loop is one run of `spatial` contiguous elements, cloned per instruction set.
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

/// A run's PlaneGradSums, sum(x) exactly as runSum adds it.
template <typename T>
MEMC_VECTOR_CLONES PlaneGradSums runGradSums(const T *dy, const T *x, int64_t n) {
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

template <typename T>
void planeSums(const T *x, const ChannelRuns &runs, int64_t begin, int64_t end, double *sums) {
  for (int64_t p = begin; p < end; ++p)
    sums[p] = runSum(x + p * runs.spatial, runs.spatial);
}

template <typename T>
void planeSquaredDeviations(const T *x, const ChannelRuns &runs, int64_t begin, int64_t end,
                            const double *means, double *squares) {
  for (int64_t p = begin; p < end; ++p)
    squares[p] = runSquaredDeviation(x + p * runs.spatial, runs.spatial, means[p % runs.channels]);
}

template <typename T>
void scaleShiftPlanes(const T *x, T *y, const ChannelRuns &runs, int64_t begin, int64_t end,
                      const float *scale, const float *shift) {
  for (int64_t p = begin; p < end; ++p) {
    int64_t c = p % runs.channels, start = p * runs.spatial;
    runScaleShift(x + start, y + start, runs.spatial, scale[c], shift[c]);
  }
}

template <typename T>
void planeGradSums(const T *dy, const T *x, const ChannelRuns &runs, int64_t begin, int64_t end,
                   PlaneGradSums *sums) {
  for (int64_t p = begin; p < end; ++p) {
    sums[p] = runGradSums(dy + p * runs.spatial, x + p * runs.spatial, runs.spatial);
  }
}

template <typename T>
void inputGradPlanes(const T *dy, const T *x, T *dx, const ChannelRuns &runs, int64_t begin,
                     int64_t end, const ChannelInputGrad *channels) {
  for (int64_t p = begin; p < end; ++p) {
    const ChannelInputGrad &c = channels[p % runs.channels];
    int64_t start = p * runs.spatial;
    runInputGrad(dy + start, x + start, dx + start, runs.spatial, c.mean, c.meanGrad, c.projection,
                 c.factor);
  }
}

#define MEMC_BATCH_NORM_CHANNELS(T)                                                                \
  template void planeSums(const T *, const ChannelRuns &, int64_t, int64_t, double *);             \
  template void planeSquaredDeviations(const T *, const ChannelRuns &, int64_t, int64_t,           \
                                       const double *, double *);                                  \
  template void scaleShiftPlanes(const T *, T *, const ChannelRuns &, int64_t, int64_t,            \
                                 const float *, const float *);                                    \
  template void planeGradSums(const T *, const T *, const ChannelRuns &, int64_t, int64_t,         \
                              PlaneGradSums *);                                                    \
  template void inputGradPlanes(const T *, const T *, T *, const ChannelRuns &, int64_t, int64_t,  \
                                const ChannelInputGrad *);
MEMC_BATCH_NORM_CHANNELS(float)
MEMC_BATCH_NORM_CHANNELS(Half)
MEMC_BATCH_NORM_CHANNELS(BFloat16)
#undef MEMC_BATCH_NORM_CHANNELS

} // namespace memc::kernels
