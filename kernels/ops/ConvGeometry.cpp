//===- ConvGeometry.cpp - the shape rule and geometry of conv -------------===//
#include "kernels/ops/ConvGeometry.h"

#include "kernels/ops/CallChecks.h"

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
      columnRows > kMaxMatrixDimension || outSize > kMaxMatrixDimension ||
      w[0] / group > kMaxMatrixDimension) {
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

} // namespace memc::kernels
