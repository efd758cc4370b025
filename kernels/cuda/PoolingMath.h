//===- PoolingMath.h - the CUDA pooling kernels' arithmetic, per window -*- C++ -*-===//
//
// The pooling ops' arithmetic for one output (forward) or one input element (gradients), shared
// by the CUDA kernels (Pooling.cu) and the host test that holds it to the CPU kernels
// (kernels/cpu/Pooling.cpp, PoolingBackward.cpp, with PoolWindows.h's windows):
//  - max_pool: the maximum tap by PyTorch's rule (the first maximum, unless a NaN comes later:
//    the last NaN wins; the first tap inside the input when all are -inf; -inf and tap 0 for a
//    window entirely in the padding), the taps visited in row-major order as the CPU's.
//  - avg_pool: the f32 sum of the taps inside the input, in the same order, over the CPU's
//    divisor (count_include_pad, a ceil_mode window clipped at the end padding; 0 when there is
//    nothing to count).
//  - the gradients gather instead of scattering: each input element sums, in f32, the
//    gradients of the windows that route to it, in increasing output order, which is the order
//    the CPU adds them in; no atomics, and the same sums to the bit. max_pool_grad routes by
//    the tap index max_pool_with_argmax saves (a byte read modulo the window's taps, as the
//    CPU reads it), its first pass saving them in int32 workspace.
// Windows of 1 to 3 spatial dimensions, lifted to 3 by leading dimensions of size 1 (a kernel of
// 1, no padding), which changes neither offsets, tap indices nor divisors.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_POOLINGMATH_H
#define MEMC_KERNELS_CUDA_POOLINGMATH_H

#include "kernels/HostDevice.h"
#include "kernels/Kernel.h"
#include "kernels/StoredElement.h"

#include <cstdint>
#include <limits>
#include <vector>

namespace memc::kernels::cuda {

/// The spatial dimensions a CUDA pooling call may have (a call with fewer is lifted to these).
constexpr int kPoolDims = 3;

/// One spatial dimension of a pooling call.
struct PoolDim {
  int64_t in, out, kernel, stride, padBegin, padEnd, dilation;
};

/// A pooling call's windows: plain data, passed to the kernels by value.
struct PoolGeometry {
  PoolDim dims[kPoolDims];
  bool countIncludePad;
  /// (image, channel) planes, and the elements of one input and one output plane.
  int64_t planes, inPlane, outPlane;
  /// Taps of a whole window (padding included); saturated at INT64_MAX.
  int64_t windowTaps;
};

/// The geometry of a call of `input` and `output` shapes (its attributes passed
/// checkPoolWindows) with at most kPoolDims spatial dimensions.
inline PoolGeometry poolGeometry(const std::vector<int64_t> &input,
                                 const std::vector<int64_t> &output, const Attributes &attributes) {
  std::vector<int64_t> kernel, strides, pads, dilations;
  attributes.getInts("kernel_shape", kernel);
  attributes.getInts("strides", strides);
  attributes.getInts("pads", pads);
  attributes.getInts("dilations", dilations);
  const int rank = static_cast<int>(kernel.size()), lifted = kPoolDims - rank;
  PoolGeometry geometry;
  geometry.countIncludePad = attributes.intOr("count_include_pad", 0) == 1;
  geometry.planes = input[0] * input[1];
  geometry.inPlane = geometry.outPlane = 1;
  geometry.windowTaps = 1;
  for (int d = 0; d < kPoolDims; ++d) {
    PoolDim &dim = geometry.dims[d];
    dim = PoolDim{1, 1, 1, 1, 0, 0, 1};
    if (d >= lifted) {
      const int at = d - lifted;
      dim = PoolDim{input[at + 2], output[at + 2],  kernel[at],   strides[at],
                    pads[at],      pads[at + rank], dilations[at]};
    }
    geometry.inPlane *= dim.in;
    geometry.outPlane *= dim.out;
    geometry.windowTaps = geometry.windowTaps > std::numeric_limits<int64_t>::max() / dim.kernel
                              ? std::numeric_limits<int64_t>::max()
                              : geometry.windowTaps * dim.kernel;
  }
  return geometry;
}

/// The taps of one window along one dimension: its first input position `start` (possibly in
/// the padding), the taps [lo, hi) inside the input, and `padded`, the taps inside the padded
/// input (a ceil_mode window hanging past the end padding is clipped there). PoolWindows's.
struct TapRange {
  int64_t start, lo, hi, padded;
};

/// Taps t < dim.kernel with start + t * dilation < limit.
MEMC_HOST_DEVICE inline int64_t tapsBelow(const PoolDim &dim, int64_t start, int64_t limit) {
  int64_t count = limit - start <= 0 ? 0 : (limit - start + dim.dilation - 1) / dim.dilation;
  return count < dim.kernel ? count : dim.kernel;
}

MEMC_HOST_DEVICE inline TapRange tapRange(const PoolDim &dim, int64_t out) {
  TapRange range;
  range.start = out * dim.stride - dim.padBegin;
  range.lo = 0;
  if (range.start < 0) { // the taps in the begin padding are skipped
    int64_t skipped = (-range.start + dim.dilation - 1) / dim.dilation;
    range.lo = skipped < dim.kernel ? skipped : dim.kernel;
  }
  int64_t below = tapsBelow(dim, range.start, dim.in);
  range.hi = below > range.lo ? below : range.lo;
  range.padded = tapsBelow(dim, range.start, dim.in + dim.padEnd);
  return range;
}

/// The tap ranges of output position `p` of a plane.
MEMC_HOST_DEVICE inline void windowRanges(const PoolGeometry &g, int64_t p,
                                          TapRange (&ranges)[kPoolDims]) {
  for (int d = kPoolDims; d-- > 0;) {
    ranges[d] = tapRange(g.dims[d], p % g.dims[d].out);
    p /= g.dims[d].out;
  }
}

/// The row-major index of tap t in a whole window (WindowTapIndex.h's), in unsigned arithmetic
/// so that it cannot overflow; it is only used for windows whose taps fit its type.
MEMC_HOST_DEVICE inline int64_t tapIndexOf(const PoolGeometry &g, const int64_t (&t)[kPoolDims]) {
  uint64_t index = 0;
  for (int d = 0; d < kPoolDims; ++d)
    index = index * static_cast<uint64_t>(g.dims[d].kernel) + static_cast<uint64_t>(t[d]);
  return static_cast<int64_t>(index);
}

/// The input-plane offset of the tap of `ranges`' window at t.
MEMC_HOST_DEVICE inline int64_t tapOffset(const PoolGeometry &g,
                                          const TapRange (&ranges)[kPoolDims],
                                          const int64_t (&t)[kPoolDims]) {
  int64_t offset = 0;
  for (int d = 0; d < kPoolDims; ++d)
    offset = offset * g.dims[d].in + ranges[d].start + t[d] * g.dims[d].dilation;
  return offset;
}

/// A window's maximum tap: its offset in the input plane (-1 for none: the window is all
/// padding) and its index in the whole window (0 for none).
struct WindowArgmax {
  int64_t offset, tap;
};

/// The maximum tap of output position `p` of input plane `plane`, by PyTorch's rule.
template <typename T>
MEMC_HOST_DEVICE inline WindowArgmax windowArgmax(const PoolGeometry &g, const T *plane,
                                                  int64_t p) {
  TapRange r[kPoolDims];
  windowRanges(g, p, r);
  WindowArgmax best{-1, 0};
  float max = -std::numeric_limits<float>::infinity();
  int64_t t[kPoolDims];
  for (t[0] = r[0].lo; t[0] < r[0].hi; ++t[0])
    for (t[1] = r[1].lo; t[1] < r[1].hi; ++t[1])
      for (t[2] = r[2].lo; t[2] < r[2].hi; ++t[2]) {
        int64_t offset = tapOffset(g, r, t);
        float value = loadFloat(plane, offset);
        if (best.offset < 0 || value > max || value != value) {
          max = value;
          best = WindowArgmax{offset, tapIndexOf(g, t)};
        }
      }
  return best;
}

/// avg_pool's divisor for the window of `ranges`: the taps inside the padded input with
/// count_include_pad, else the taps inside the input (0: nothing to count).
MEMC_HOST_DEVICE inline int64_t windowDivisor(const PoolGeometry &g,
                                              const TapRange (&ranges)[kPoolDims]) {
  int64_t divisor = 1;
  for (int d = 0; d < kPoolDims; ++d)
    divisor *= g.countIncludePad ? ranges[d].padded : ranges[d].hi - ranges[d].lo;
  return divisor;
}

/// avg_pool's value for output position `p` of input plane `plane`.
template <typename T>
MEMC_HOST_DEVICE inline float windowAverage(const PoolGeometry &g, const T *plane, int64_t p) {
  TapRange r[kPoolDims];
  windowRanges(g, p, r);
  float sum = 0.0f;
  int64_t t[kPoolDims];
  for (t[0] = r[0].lo; t[0] < r[0].hi; ++t[0])
    for (t[1] = r[1].lo; t[1] < r[1].hi; ++t[1])
      for (t[2] = r[2].lo; t[2] < r[2].hi; ++t[2])
        sum += loadFloat(plane, tapOffset(g, r, t));
  const int64_t divisor = windowDivisor(g, r);
  return divisor == 0 ? 0.0f : sum / static_cast<float>(divisor);
}

/// The outputs [first, last] along `dim` whose windows reach input position `x` (taps
/// start + t * dilation for t < kernel; whether one lands on x is tapAt's).
struct ReachingOutputs {
  int64_t first, last;
};

MEMC_HOST_DEVICE inline ReachingOutputs reachingOutputs(const PoolDim &dim, int64_t x) {
  const int64_t padded = x + dim.padBegin; // x in the padded input
  const int64_t lowest = padded - (dim.kernel - 1) * dim.dilation;
  ReachingOutputs outputs;
  outputs.first = lowest <= 0 ? 0 : (lowest + dim.stride - 1) / dim.stride;
  outputs.last = padded / dim.stride < dim.out - 1 ? padded / dim.stride : dim.out - 1;
  return outputs;
}

/// The tap of output `out`'s window at input position `x` along `dim` (out among x's
/// reachingOutputs), or -1 when x falls between two dilated taps.
MEMC_HOST_DEVICE inline int64_t tapAt(const PoolDim &dim, int64_t out, int64_t x) {
  const int64_t distance = x + dim.padBegin - out * dim.stride;
  return distance % dim.dilation == 0 ? distance / dim.dilation : -1;
}

/// Calls visit(p, t) for every output position p of a plane (in increasing order) whose window
/// has input-plane element `x` as its tap t.
template <typename Visit>
MEMC_HOST_DEVICE inline void forEachWindowHolding(const PoolGeometry &g, int64_t x, Visit &&visit) {
  int64_t position[kPoolDims];
  for (int d = kPoolDims; d-- > 0;) {
    position[d] = x % g.dims[d].in;
    x /= g.dims[d].in;
  }
  ReachingOutputs reach[kPoolDims];
  for (int d = 0; d < kPoolDims; ++d)
    reach[d] = reachingOutputs(g.dims[d], position[d]);
  int64_t o[kPoolDims], t[kPoolDims];
  for (o[0] = reach[0].first; o[0] <= reach[0].last; ++o[0]) {
    if ((t[0] = tapAt(g.dims[0], o[0], position[0])) < 0)
      continue;
    for (o[1] = reach[1].first; o[1] <= reach[1].last; ++o[1]) {
      if ((t[1] = tapAt(g.dims[1], o[1], position[1])) < 0)
        continue;
      for (o[2] = reach[2].first; o[2] <= reach[2].last; ++o[2]) {
        if ((t[2] = tapAt(g.dims[2], o[2], position[2])) < 0)
          continue;
        visit((o[0] * g.dims[1].out + o[1]) * g.dims[2].out + o[2], t);
      }
    }
  }
}

/// max_pool_grad's (and max_pool_grad_argmax's) result at input-plane element `x`: the
/// gradients of the windows whose saved maximum tap (`taps`, an output plane of tap indices,
/// read modulo the window's taps) is x.
template <typename G, typename Index>
MEMC_HOST_DEVICE inline float maxPoolGradAt(const PoolGeometry &g, const G *gradPlane,
                                            const Index *tapPlane, int64_t x) {
  float sum = 0.0f;
  forEachWindowHolding(g, x, [&](int64_t p, const int64_t(&t)[kPoolDims]) {
    if (static_cast<int64_t>(tapPlane[p]) % g.windowTaps == tapIndexOf(g, t))
      sum += loadFloat(gradPlane, p);
  });
  return sum;
}

/// avg_pool_grad's result at input-plane element `x`: each window's gradient over its divisor,
/// from every window holding x.
template <typename G>
MEMC_HOST_DEVICE inline float avgPoolGradAt(const PoolGeometry &g, const G *gradPlane, int64_t x) {
  float sum = 0.0f;
  forEachWindowHolding(g, x, [&](int64_t p, const int64_t(&)[kPoolDims]) {
    TapRange r[kPoolDims];
    windowRanges(g, p, r);
    const int64_t divisor = windowDivisor(g, r);
    if (divisor != 0)
      sum += loadFloat(gradPlane, p) / static_cast<float>(divisor);
  });
  return sum;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_POOLINGMATH_H
