//===- ConvolutionColumns.h - im2col and col2im -----------------*- C++ -*-===//
//
// The column matrix that turns a convolution into matrix products: for one image and group,
// col[(c, kernel tap), output position] is the input element that tap reads for that output
// position, 0 in the padding. Column matrices are built (and added back) a block of output rows
// at a time: output positions [first * lastOut, (first + outputRows) * lastOut), where lastOut
// is the innermost output dimension.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H
#define MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H

#include "kernels/ops/ConvGeometry.h"

#include <cstdint>
#include <string>

namespace memc::kernels {

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
