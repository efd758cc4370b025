//===- ConvolutionColumns.h - conv geometry, im2col, col2im -----*- C++ -*-===//
//
// The geometry of a grouped N-d convolution, the shape rule conv and its gradients check, and
// the column matrix that turns a convolution into matrix products: for one image and group,
// col[(c, kernel tap), output position] is the input element that tap reads for that output
// position, 0 in the padding. Column matrices are built (and added back) a block of output rows
// at a time: output positions [first * lastOut, (first + outputRows) * lastOut), where lastOut
// is the innermost output dimension.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H
#define MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H

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

/// Fills rows [rowBegin, rowEnd) of the column matrix of `image` (the group's first channel)
/// for output rows [first, first + outputRows); row `rowBegin` starts at `col`, rows are `ld`
/// elements apart.
void buildColumns(const ConvGeometry &g, const float *image, int64_t first, int64_t outputRows,
                  int64_t rowBegin, int64_t rowEnd, float *col, int64_t ld);

/// The adjoint of buildColumns for the rows of channels [channelBegin, channelEnd): adds each
/// column element to the input element it was read from (padding elements are dropped). `col`
/// holds the group's whole column matrix, rows `ld` elements apart. Channels write disjoint
/// planes, so ranges of channels may run on different threads.
void addColumns(const ConvGeometry &g, const float *col, int64_t ld, int64_t first,
                int64_t outputRows, int64_t channelBegin, int64_t channelEnd, float *image);

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H
