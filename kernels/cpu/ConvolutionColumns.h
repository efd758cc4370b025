//===- ConvolutionColumns.h - im2col and its adjoint ------------*- C++ -*-===//
//
// The geometry of a grouped N-d convolution and the column matrix that turns it into matrix
// products: for one image and group, col[(c, kernel tap), output position] is the input element
// that tap reads for that output position, 0 in the padding. Column matrices are built (and
// added back) a block of output rows at a time: output positions [first * lastOut,
// (first + outputRows) * lastOut), where lastOut is the innermost output dimension.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H
#define MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"

#include <cstdint>

namespace memc::kernels {

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
