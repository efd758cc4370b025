//===- ConvolutionColumns.cpp - conv geometry, im2col, col2im -------------===//
#include "kernels/cpu/ConvolutionColumns.h"

#include <algorithm>
#include <vector>

namespace memc::kernels {

namespace {

/// Walks column-matrix rows [rowBegin, rowEnd) (a channel and kernel tap each) over output rows
/// [first, first + outputRows): calls run(row, r, source, lo, hi) for each output row r whose
/// tap lands inside the input in the outer dimensions, where output positions o in [lo, hi) of
/// the row read element source + o * stride of the group's image (the others read padding),
/// and skip(row, r) for the other output rows.
template <typename Run, typename Skip>
void walkColumnRows(const ConvGeometry &g, int64_t rowBegin, int64_t rowEnd, int64_t first,
                    int64_t outputRows, Run run, Skip skip) {
  size_t rank = g.kernel.size(), last = rank - 1;
  int64_t lastOut = g.outSpatial[last], lastIn = g.inSpatial[last], stride = g.strides[last];
  std::vector<int64_t> tap(rank), position(rank);
  for (int64_t row = rowBegin; row < rowEnd; ++row) {
    int64_t rest = row % g.taps;
    for (size_t d = rank; d-- > 0;) {
      tap[d] = rest % g.kernel[d];
      rest /= g.kernel[d];
    }
    int64_t plane = (row / g.taps) * g.inSize;
    int64_t lastOffset = tap[last] * g.dilations[last] - g.padsBegin[last];
    // Output positions o of the last dimension that read inside the input: 0 <= o*s + off < n.
    int64_t lo = lastOffset >= 0 ? 0 : (-lastOffset + stride - 1) / stride;
    int64_t hi = lastIn - lastOffset <= 0 ? 0 : (lastIn - lastOffset + stride - 1) / stride;
    lo = std::min(lo, lastOut);
    hi = std::clamp(hi, lo, lastOut);
    for (int64_t r = 0; r < outputRows; ++r) {
      // Position of output row first + r in the outer output dimensions.
      int64_t linear = first + r, inputOffset = 0;
      bool inside = true;
      for (size_t d = last; d-- > 0;) {
        int64_t o = linear % g.outSpatial[d];
        linear /= g.outSpatial[d];
        int64_t in = o * g.strides[d] + tap[d] * g.dilations[d] - g.padsBegin[d];
        inside &= in >= 0 && in < g.inSpatial[d];
        position[d] = in;
      }
      if (!inside) {
        skip(row, r);
        continue;
      }
      for (size_t d = 0; d < last; ++d)
        inputOffset = inputOffset * g.inSpatial[d] + position[d];
      run(row, r, plane + inputOffset * lastIn + lastOffset, lo, hi);
    }
  }
}

} // namespace

void buildColumns(const ConvGeometry &g, const float *image, int64_t first, int64_t outputRows,
                  int64_t rowBegin, int64_t rowEnd, float *col, int64_t ld) {
  int64_t lastOut = g.outSpatial.back(), stride = g.strides.back();
  walkColumnRows(
      g, rowBegin, rowEnd, first, outputRows,
      [&](int64_t row, int64_t r, int64_t source, int64_t lo, int64_t hi) {
        float *dst = col + (row - rowBegin) * ld + r * lastOut;
        std::fill(dst, dst + lo, 0.0f);
        for (int64_t o = lo; o < hi; ++o)
          dst[o] = image[source + o * stride];
        std::fill(dst + hi, dst + lastOut, 0.0f);
      },
      [&](int64_t row, int64_t r) {
        float *dst = col + (row - rowBegin) * ld + r * lastOut;
        std::fill(dst, dst + lastOut, 0.0f);
      });
}

void addColumns(const ConvGeometry &g, const float *col, int64_t ld, int64_t first,
                int64_t outputRows, int64_t channelBegin, int64_t channelEnd, float *image) {
  int64_t lastOut = g.outSpatial.back(), stride = g.strides.back();
  walkColumnRows(
      g, channelBegin * g.taps, channelEnd * g.taps, first, outputRows,
      [&](int64_t row, int64_t r, int64_t source, int64_t lo, int64_t hi) {
        const float *src = col + row * ld + r * lastOut;
        for (int64_t o = lo; o < hi; ++o)
          image[source + o * stride] += src[o];
      },
      [](int64_t, int64_t) {});
}

} // namespace memc::kernels
