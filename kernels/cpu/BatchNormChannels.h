//===- BatchNormChannels.h - batch norm's loops over one channel -*- C++ -*-===//
//
// A channel of an [N, C, spatial...] tensor is N contiguous runs of `spatial` elements, one per
// image. batch_norm, its gradient and batch_moments walk a channel run by run with these loops,
// compiled per instruction set (BatchNormChannels.cpp) so each run vectorizes whatever the
// element type; sums go in f64 lanes in a fixed order, so the statistics are the same in every
// kernel that recomputes them and do not depend on the thread count.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_BATCHNORMCHANNELS_H
#define MEMC_KERNELS_CPU_BATCHNORMCHANNELS_H

#include "kernels/Tensor.h"

#include <cstdint>

namespace memc::kernels {

/// Where channel c's runs lie in an [N, C, spatial...] tensor.
struct ChannelRuns {
  int64_t batch, channels, spatial;

  explicit ChannelRuns(const TensorView &tensor);
  int64_t perChannel() const { return batch * spatial; }
  /// The first element of image n's run of channel c.
  int64_t start(int64_t n, int64_t c) const { return (n * channels + c) * spatial; }
};

/// A channel's mean and biased variance, from a sum and then the squared deviations from the
/// mean (a second pass, accurate when the mean is large next to the spread).
struct ChannelMoments {
  double mean, variance;
};

/// What the gradients of a channel need: its moments (channelMoments' values, bit for bit),
/// sum(dy) and sum(dy * (x - mean)).
struct ChannelGradSums {
  ChannelMoments moments;
  double gradSum, centeredDot;
};

template <typename T> ChannelMoments channelMoments(const T *x, const ChannelRuns &runs, int64_t c);

/// y = x * scale + shift over channel c (y may be x).
template <typename T>
void scaleShiftChannel(const T *x, T *y, const ChannelRuns &runs, int64_t c, float scale,
                       float shift);

/// Two passes: the sums of x, dy and dy * x, then the squared deviations of x.
template <typename T>
ChannelGradSums channelGradSums(const T *dy, const T *x, const ChannelRuns &runs, int64_t c);

/// dx = (dy - meanGrad - (x - mean) * projection) * factor over channel c (dx may be dy or x).
template <typename T>
void channelInputGrad(const T *dy, const T *x, T *dx, const ChannelRuns &runs, int64_t c,
                      double mean, float meanGrad, float projection, float factor);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_BATCHNORMCHANNELS_H
