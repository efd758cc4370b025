//===- BatchNormChannels.h - batch norm's loops over planes -----*- C++ -*-===//
//
// A channel of an [N, C, spatial...] tensor is N contiguous runs of `spatial` elements, one per
// image: planes p = n * C + c. batch_norm, its gradient and batch_moments run passes over the
// planes (BatchNormPasses.h says in which order and on which threads) with these loops, compiled
// per instruction set (BatchNormChannels.cpp) so each run vectorizes whatever the element type.
// A plane's sums go in f64 lanes in a fixed order, and a channel's statistics add its planes'
// sums in image order (channelTotal), so they are the same in every kernel that recomputes
// them, whatever the order and the thread count.
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
  int64_t planes() const { return batch * channels; }
  /// The plane of image n's run of channel c; its first element is plane * spatial.
  int64_t plane(int64_t n, int64_t c) const { return n * channels + c; }
};

/// Channel c's total of a per-plane value, its planes added in image order.
inline double channelTotal(const double *perPlane, const ChannelRuns &runs, int64_t c) {
  double total = 0.0;
  for (int64_t n = 0; n < runs.batch; ++n)
    total += perPlane[runs.plane(n, c)];
  return total;
}

/// What a plane contributes to its channel's gradient sums: sum(x), sum(dy) and sum(dy * x).
struct PlaneGradSums {
  double input, grad, product;
};

/// A channel's dx = (dy - meanGrad - (x - mean) * projection) * factor.
struct ChannelInputGrad {
  double mean;
  float meanGrad, projection, factor;
};

/// sums[p] = the sum of plane p, for planes [begin, end).
template <typename T>
void planeSums(const T *x, const ChannelRuns &runs, int64_t begin, int64_t end, double *sums);

/// squares[p] = the sum of plane p's squared deviations from its channel's mean (a second pass,
/// accurate when the mean is large next to the spread).
template <typename T>
void planeSquaredDeviations(const T *x, const ChannelRuns &runs, int64_t begin, int64_t end,
                            const double *means, double *squares);

/// y = x * scale[c] + shift[c] over planes [begin, end) (y may be x).
template <typename T>
void scaleShiftPlanes(const T *x, T *y, const ChannelRuns &runs, int64_t begin, int64_t end,
                      const float *scale, const float *shift);

/// sums[p] = plane p's gradient sums, for planes [begin, end).
template <typename T>
void planeGradSums(const T *dy, const T *x, const ChannelRuns &runs, int64_t begin, int64_t end,
                   PlaneGradSums *sums);

/// dx over planes [begin, end) by their channels' coefficients (dx may be dy or x).
template <typename T>
void inputGradPlanes(const T *dy, const T *x, T *dx, const ChannelRuns &runs, int64_t begin,
                     int64_t end, const ChannelInputGrad *channels);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_BATCHNORMCHANNELS_H
