//===- ConvolutionColumns.h - im2col and col2im -----------------*- C++ -*-===//
//
// The column matrix that turns a convolution into matrix products: for one image and group,
// col[(c, kernel tap), output position] is the input element that tap reads for that output
// position, 0 in the padding. Column matrices are built (and added back) a tile of output rows
// at a time (columnTileRows): output positions [first * lastOut, (first + outputRows) * lastOut),
// where lastOut is the innermost output dimension.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H
#define MEMC_KERNELS_CPU_CONVOLUTIONCOLUMNS_H

#include "kernels/cpu/Gemm.h"
#include "kernels/cpu/WorkspaceSlots.h"
#include "kernels/ops/ConvGeometry.h"

#include <algorithm>
#include <cstdint>
#include <string>

namespace memc::kernels {

/// Output positions per tile of the column matrix the convolution kernels build at once. A
/// tile's product (R x Mg x positions multiply-adds) is either small enough to run on one
/// thread, and then 256 positions keep the workspace tiny, or it is split over threads, and then
/// it holds at least kParallelTileWork multiply-adds so that the split pays for its dispatch
/// (256-position tiles of a 64-channel 3x3 conv ran twice as slowly on 2 threads). Either way
/// the workspace is at most R x 4096 elements per slot, not the whole unfolded input.
inline constexpr int64_t kColumnTilePixels = 256;
inline constexpr int64_t kMaxColumnTilePixels = 4096;
inline constexpr double kParallelTileWork = double(int64_t{1} << 26);

/// Output rows per tile out of `totalRows`: the tile's positions (above) rounded down to whole
/// rows of the innermost output dimension, at least one row.
inline int64_t columnTileRows(const ConvGeometry &g, int64_t totalRows) {
  double perPosition = static_cast<double>(g.columnRows) * static_cast<double>(g.groupOutChannels);
  int64_t pixels = kColumnTilePixels;
  if (perPosition * kColumnTilePixels >= 2.0 * kGemmParallelWork)
    pixels = static_cast<int64_t>(std::clamp(
        kParallelTileWork / perPosition, double(kColumnTilePixels), double(kMaxColumnTilePixels)));
  int64_t lastOut = std::max<int64_t>(1, g.outSpatial.back());
  return std::clamp<int64_t>(pixels / lastOut, 1, std::max<int64_t>(1, totalRows));
}

/// Output rows of one image whose columns conv and conv_grad_input build at once.
inline int64_t columnBlockRows(const ConvGeometry &g) { return columnTileRows(g, g.outputRows()); }

/// Elements of that block of columns: a conv or conv_grad_input task's scratch.
inline int64_t columnBlockElements(const ConvGeometry &g) {
  return g.columnRows * columnBlockRows(g) * g.outSpatial.back();
}

/// Column matrices up to this many elements make a task small enough to run on one thread.
inline constexpr int64_t kSmallTaskColumns = int64_t{1} << 20;

/// Scratch elements per slot up to which conv and conv_grad_weight spread their small tasks over
/// threads (256 KiB a slot, 4 MiB for all 16): beyond, a task's products are large enough to
/// split themselves, and slots would multiply the workspace a budget must hold.
inline constexpr int64_t kSmallSlotElements = int64_t{1} << 16;

/// Scratch slots `tasks` tasks (ConvolutionTasks.h) use: one per concurrent task when they are
/// small enough to spread over threads, else one (each task then splits its own loops over
/// threads).
inline int64_t taskSlots(const ConvGeometry &g, int64_t tasks) {
  if (g.columnRows * g.outSize > kSmallTaskColumns)
    return 1;
  return std::clamp<int64_t>(tasks, 1, kMaxWorkspaceSlots);
}

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
