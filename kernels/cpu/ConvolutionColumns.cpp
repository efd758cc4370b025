//===- ConvolutionColumns.cpp - conv geometry, im2col, col2im -------------===//
#include "kernels/cpu/ConvolutionColumns.h"

#include "kernels/cpu/CallChecks.h"
#include "kernels/cpu/Gemm.h"

#include <algorithm>
#include <vector>

namespace memc::kernels {

bool checkConvShapes(const TensorView &input, const TensorView &weight, const TensorView &output,
                     const Attributes &attributes, const std::string &outputRole,
                     std::string &error) {
  int64_t group;
  std::vector<int64_t> strides, pads, dilations;
  if (!checkRankAtLeast(input, 3, "input", error) ||
      !requireInts(attributes, "strides", strides, error) ||
      !requireInts(attributes, "pads", pads, error) ||
      !requireInts(attributes, "dilations", dilations, error) ||
      !requireInt(attributes, "group", group, error))
    return false;
  const Shape &x = input.shape, &w = weight.shape;
  if (w.size() != x.size() || group <= 0 || x[1] % group != 0 || w[1] != x[1] / group ||
      w[0] % group != 0) {
    error = "conv weight " + formatShape(w) + " does not fit input " + formatShape(x) +
            " with group " + std::to_string(group);
    return false;
  }
  Shape expected;
  if (!windowShape(x, w[0], Shape(w.begin() + 2, w.end()), strides, pads, dilations, false,
                   expected, error) ||
      !checkShape(output, expected, outputRole, error))
    return false;
  int64_t outSize = 0, columnRows = 0;
  if (!checkedNumElements(Shape(expected.begin() + 2, expected.end()), outSize) ||
      !checkedNumElements(Shape(w.begin() + 1, w.end()), columnRows) ||
      columnRows > kMaxGemmDimension || outSize > kMaxGemmDimension ||
      w[0] / group > kMaxGemmDimension) {
    error = "conv is too large for one sgemm per group (" + std::to_string(columnRows) + " x " +
            std::to_string(outSize) + ")";
    return false;
  }
  return true;
}

ConvGeometry::ConvGeometry(const Shape &input, const Shape &weight, const Shape &output,
                           const Attributes &attributes) {
  std::vector<int64_t> pads;
  attributes.getInts("strides", strides);
  attributes.getInts("pads", pads);
  attributes.getInts("dilations", dilations);
  group = attributes.intOr("group", 1);
  batch = input[0];
  channels = input[1];
  outChannels = weight[0];
  size_t rank = input.size() - 2;
  for (size_t d = 0; d < rank; ++d) {
    inSpatial.push_back(input[d + 2]);
    outSpatial.push_back(output[d + 2]);
    kernel.push_back(weight[d + 2]);
    padsBegin.push_back(pads[d]);
    inSize *= inSpatial[d];
    outSize *= outSpatial[d];
    taps *= kernel[d];
  }
  groupChannels = channels / group;
  groupOutChannels = outChannels / group;
  columnRows = groupChannels * taps;
}

bool ConvGeometry::isPointwise() const {
  for (size_t d = 0; d < kernel.size(); ++d)
    if (kernel[d] != 1 || strides[d] != 1 || padsBegin[d] != 0 || outSpatial[d] != inSpatial[d])
      return false;
  return true;
}

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
