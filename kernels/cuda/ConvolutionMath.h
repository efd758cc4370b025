//===- ConvolutionMath.h - im2col and col2im index mapping ------*- C++ -*-===//
//
// The CUDA convolutions (Convolution.cu) are im2col products, as the CPU's
// (kernels/cpu/ConvolutionColumns.h): for one image and group, the column matrix
// col[(channel, kernel tap), output position] holds the input element the tap reads for that
// output position, 0 in the padding. On the GPU each column element is one thread (im2col), and
// col2im gathers: each input element sums the column elements that read it, tap by tap, so no
// two threads add into one element. Both mappings are here, for the host test that checks them
// against the CPU's buildColumns and addColumns (test/kernels/cuda/MatMulMathTest.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CUDA_CONVOLUTIONMATH_H
#define MEMC_KERNELS_CUDA_CONVOLUTIONMATH_H

#include "kernels/HostDevice.h"
#include "kernels/ops/ConvGeometry.h"

#include <cstdint>

namespace memc::kernels::cuda {

/// Spatial dimensions the CUDA convolutions take (conv1d to conv3d).
constexpr int kMaxConvSpatialRank = 3;

/// A convolution's windows as a kernel argument: fixed arrays instead of ConvGeometry's vectors.
struct ConvWindow {
  int rank = 0;
  int64_t inSpatial[kMaxConvSpatialRank] = {}, outSpatial[kMaxConvSpatialRank] = {};
  int64_t kernel[kMaxConvSpatialRank] = {}, strides[kMaxConvSpatialRank] = {};
  int64_t pads[kMaxConvSpatialRank] = {}, dilations[kMaxConvSpatialRank] = {};
  int64_t inSize = 1, outSize = 1, taps = 1;
};

/// The windows of `g` (at most kMaxConvSpatialRank spatial dims: the CUDA target's limit).
inline ConvWindow convWindowOf(const ConvGeometry &g) {
  ConvWindow w;
  w.rank = static_cast<int>(g.kernel.size());
  for (int d = 0; d < w.rank; ++d) {
    w.inSpatial[d] = g.inSpatial[d];
    w.outSpatial[d] = g.outSpatial[d];
    w.kernel[d] = g.kernel[d];
    w.strides[d] = g.strides[d];
    w.pads[d] = g.padsBegin[d];
    w.dilations[d] = g.dilations[d];
  }
  w.inSize = g.inSize;
  w.outSize = g.outSize;
  w.taps = g.taps;
  return w;
}

/// The element of a group's image (channel * inSize + spatial offset) that column row `row`
/// (channel row / taps, kernel tap row % taps) reads at output position `position`; -1 when
/// it reads padding.
MEMC_HOST_DEVICE inline int64_t im2colSource(const ConvWindow &w, int64_t row, int64_t position) {
  int64_t tap = row % w.taps, offset = 0, scale = 1;
  for (int d = w.rank - 1; d >= 0; --d) {
    const int64_t t = tap % w.kernel[d], o = position % w.outSpatial[d];
    tap /= w.kernel[d];
    position /= w.outSpatial[d];
    const int64_t in = o * w.strides[d] + t * w.dilations[d] - w.pads[d];
    if (in < 0 || in >= w.inSpatial[d])
      return -1;
    offset += in * scale;
    scale *= w.inSpatial[d];
  }
  return row / w.taps * w.inSize + offset;
}

/// The output position at which kernel tap `tap` reads the input element at spatial offset
/// `input`; -1 when no window puts the tap there (between strides, or past the output).
MEMC_HOST_DEVICE inline int64_t col2imPosition(const ConvWindow &w, int64_t tap, int64_t input) {
  int64_t position = 0, scale = 1;
  for (int d = w.rank - 1; d >= 0; --d) {
    const int64_t t = tap % w.kernel[d], in = input % w.inSpatial[d];
    tap /= w.kernel[d];
    input /= w.inSpatial[d];
    const int64_t reach = in + w.pads[d] - t * w.dilations[d];
    if (reach < 0 || reach % w.strides[d] != 0 || reach / w.strides[d] >= w.outSpatial[d])
      return -1;
    position += reach / w.strides[d] * scale;
    scale *= w.outSpatial[d];
  }
  return position;
}

} // namespace memc::kernels::cuda

#endif // MEMC_KERNELS_CUDA_CONVOLUTIONMATH_H
