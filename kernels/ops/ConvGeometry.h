//===- ConvGeometry.h - the shape rule and geometry of conv -----*- C++ -*-===//
//
// The geometry of a grouped N-d convolution and the shape rule that conv and its gradients
// check: op semantics, shared by every device's convolution kernels.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_OPS_CONVGEOMETRY_H
#define MEMC_KERNELS_OPS_CONVGEOMETRY_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

/// The shape rule of conv, conv_grad_input and conv_grad_weight: `input` [N, C, spatial...]
/// convolved with `weight` [M, C/group, kernel...] under `attributes` gives `output` (named
/// `outputRole` in messages), and each group's product fits one sgemm.
bool checkConvShapes(const TensorView &input, const TensorView &weight, const TensorView &output,
                     const Attributes &attributes, const std::string &outputRole,
                     std::string &error);

struct ConvGeometry {
  int64_t batch, channels, outChannels, group;
  Shape inSpatial, outSpatial, kernel, strides, padsBegin, dilations;
  int64_t inSize = 1, outSize = 1, taps = 1;
  int64_t groupChannels, groupOutChannels, columnRows;

  /// The convolution of `input` [N, C, spatial...] with `weight` [M, C/group, kernel...] into
  /// `output` [N, M, spatial...], whose shapes and attributes passed the conv shape rule.
  ConvGeometry(const Shape &input, const Shape &weight, const Shape &output,
               const Attributes &attributes);

  /// Output rows: output positions divided by the innermost output dimension.
  int64_t outputRows() const { return outSize / outSpatial.back(); }

  /// A 1x1 window at every input position: the image is its own column matrix.
  bool isPointwise() const;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_OPS_CONVGEOMETRY_H
