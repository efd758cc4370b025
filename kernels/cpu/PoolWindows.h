//===- PoolWindows.h - the windows of an N-d pooling call -------*- C++ -*-===//
//
// For every spatial dimension and output index of an NC[D]HW pooling call: the window's first
// input position, the range [lo, hi) of its taps that land inside the input (computed up front,
// so loops over a window test nothing), and the taps inside the padded input. The latter is
// avg_pool's count_include_pad divisor: a ceil_mode window hanging past the end padding is
// clipped there, as PyTorch clips it. The pooling kernels and their gradients share these
// windows; the shape rule of their attributes is the ops' (kernels/ops/PoolWindowChecks.h).
//
// forEachWindowInRuns also hands out, for 2-D windows, runs of adjacent windows of one output
// row whose column taps all lie inside the input: every window of a run has the same taps,
// shifted by the column stride, so a kernel can compute a run's windows side by side in vector
// lanes (max_pool_grad's argmax) where a window at a time is a chain of dependent compares.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_POOLWINDOWS_H
#define MEMC_KERNELS_CPU_POOLWINDOWS_H

#include "kernels/Kernel.h"
#include "kernels/ShapeRules.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace memc::kernels {

class PoolWindows {
public:
  /// Windows of a call whose attributes passed checkPoolWindows for `input` giving `output`.
  PoolWindows(const Shape &input, const Shape &output, const Attributes &attributes) {
    std::vector<int64_t> pads;
    attributes.getInts("kernel_shape", kernel);
    attributes.getInts("strides", strides);
    attributes.getInts("pads", pads);
    attributes.getInts("dilations", dilations);
    countIncludePad = attributes.intOr("count_include_pad", 0) == 1;
    planeCount = input[0] * input[1];
    size_t rank = kernel.size();
    dims.resize(rank);
    inStrides.assign(rank, 1);
    inSizes.assign(input.begin() + 2, input.end());
    for (size_t d = rank; d-- > 1;)
      inStrides[d - 1] = inStrides[d] * input[d + 2];
    for (size_t d = 0; d < rank; ++d) {
      int64_t size = input[d + 2], dilation = dilations[d], paddedEnd = size + pads[d + rank];
      // Taps t in [0, kernel) with start + t * dilation < limit.
      auto tapsBelow = [&](int64_t start, int64_t limit) {
        int64_t count = limit - start <= 0 ? 0 : (limit - start + dilation - 1) / dilation;
        return std::min(count, kernel[d]);
      };
      inSize *= size;
      outSize *= output[d + 2];
      for (int64_t o = 0; o < output[d + 2]; ++o) {
        int64_t start = o * strides[d] - pads[d];
        int64_t lo = start >= 0 ? 0 : std::min((-start + dilation - 1) / dilation, kernel[d]);
        dims[d].start.push_back(start);
        dims[d].lo.push_back(lo);
        dims[d].hi.push_back(std::max(lo, tapsBelow(start, size)));
        dims[d].padded.push_back(tapsBelow(start, paddedEnd));
      }
    }
  }

  /// Calls visit(offset) for each tap of output position `out` inside the input, in row-major
  /// order (the innermost dimension fastest), with the tap's element offset in an input plane.
  /// `tap` is scratch of the spatial rank. Returns false for a window entirely in the padding.
  template <typename Visit>
  bool forEachTap(const std::vector<int64_t> &out, std::vector<int64_t> &tap, Visit &&visit) const {
    size_t rank = dims.size(), last = rank - 1;
    int64_t offset = 0;
    bool empty = false;
    for (size_t d = 0; d < rank; ++d) {
      int64_t lo = dims[d].lo[out[d]];
      empty |= lo >= dims[d].hi[out[d]];
      offset += (dims[d].start[out[d]] + lo * dilations[d]) * inStrides[d];
      tap[d] = lo;
    }
    if (empty)
      return false;
    int64_t step = dilations[last];
    int64_t rowSpan = (dims[last].hi[out[last]] - dims[last].lo[out[last]]) * step;
    // A plain loop over the innermost dimension's taps, an odometer over the others'.
    for (bool more = true; more;) {
      for (int64_t tapOffset = offset; tapOffset < offset + rowSpan; tapOffset += step)
        visit(tapOffset);
      more = false;
      for (size_t d = last; d-- > 0 && !more;) {
        offset += dilations[d] * inStrides[d];
        more = ++tap[d] < dims[d].hi[out[d]];
        if (!more) {
          offset -= (tap[d] - dims[d].lo[out[d]]) * dilations[d] * inStrides[d];
          tap[d] = dims[d].lo[out[d]];
        }
      }
    }
    return true;
  }

  /// Calls visitWindow(p, window) for each output position p of a plane in row-major order;
  /// window.forEachTap(visit) visits its taps as forEachTap does and window.divisor() is
  /// divisor's. 2-D windows, the common case, are two plain loops over precomputed ranges
  /// instead of forEachTap's odometer (the ResNet bench model's max_pool and max_pool_grad ran
  /// 1.4-1.7x faster).
  template <typename VisitWindow> void forEachWindow(VisitWindow &&visitWindow) const {
    if (dims.size() == 2) {
      int64_t p = 0;
      for (size_t row = 0; row < dims[0].start.size(); ++row)
        for (size_t column = 0; column < dims[1].start.size(); ++column, ++p)
          visitWindow(p, Window2d{*this, row, column});
      return;
    }
    std::vector<int64_t> out(dims.size(), 0), tap(dims.size());
    for (int64_t p = 0; p < outSize; ++p, next(out))
      visitWindow(p, WindowNd{*this, out, tap});
  }

  /// Window w < windows of a run (forEachWindowInRuns) has its taps at element offsets first +
  /// w * windowStep + r * rowStep + c * columnStep of an input plane, for r < rows and c <
  /// columns, in the row-major order forEachTap visits. rows is 0 for windows entirely in the
  /// padding rows.
  struct TapRun {
    int64_t windows, first, windowStep, rows, rowStep, columns, columnStep;
  };

  /// As forEachWindow, except that 2-D windows whose column taps all lie inside the input come
  /// in runs of MinRun to MaxRun (at least 2 * MinRun) windows, as visitRun(p, run) for output
  /// positions p .. p + run.windows - 1 of a row, so that a kernel can compute a run's windows
  /// side by side in vector lanes. Rows with fewer such windows, and the windows at a row's
  /// ends, go to visitWindow.
  template <int64_t MinRun, int64_t MaxRun, typename VisitWindow, typename VisitRun>
  void forEachWindowInRuns(VisitWindow &&visitWindow, VisitRun &&visitRun) const {
    static_assert(MaxRun >= 2 * MinRun, "a stretch splits into runs of MinRun or more");
    if (dims.size() != 2) {
      forEachWindow(visitWindow);
      return;
    }
    const Ranges &rows = dims[0], &columns = dims[1];
    int64_t width = static_cast<int64_t>(columns.start.size());
    // Column windows with every tap inside form one stretch: starts grow with the column.
    int64_t begin = 0;
    while (begin < width && !columnInside(begin))
      ++begin;
    int64_t end = begin;
    while (end < width && columnInside(end))
      ++end;
    if (end - begin < MinRun)
      begin = end = width;
    int64_t rowStep = dilations[0] * inStrides[0];
    int64_t p = 0;
    for (size_t row = 0; row < rows.start.size(); ++row, p += width) {
      int64_t rowLo = rows.lo[row];
      int64_t rowFirst = (rows.start[row] + rowLo * dilations[0]) * inStrides[0];
      for (int64_t column = 0; column < begin; ++column)
        visitWindow(p + column, Window2d{*this, row, static_cast<size_t>(column)});
      for (int64_t column = begin, length; column < end; column += length) {
        int64_t left = end - column;
        length = left <= MaxRun ? left : std::min(MaxRun, left - MinRun);
        visitRun(p + column, TapRun{length, rowFirst + columns.start[column], strides[1],
                                    rows.hi[row] - rowLo, rowStep, kernel[1], dilations[1]});
      }
      for (int64_t column = end; column < width; ++column)
        visitWindow(p + column, Window2d{*this, row, static_cast<size_t>(column)});
    }
  }

  /// avg_pool's divisor for output position `out`, as PyTorch's: the taps inside the padded
  /// input with count_include_pad, else the taps inside the input (0: nothing to count).
  int64_t divisor(const std::vector<int64_t> &out) const {
    int64_t count = 1;
    for (size_t d = 0; d < dims.size(); ++d)
      count *= countIncludePad ? dims[d].padded[out[d]] : dims[d].hi[out[d]] - dims[d].lo[out[d]];
    return count;
  }

  /// Advances output position `out` (of the spatial rank) to the next one in row-major order.
  void next(std::vector<int64_t> &out) const {
    for (size_t d = out.size(); d-- > 0;) {
      if (++out[d] < static_cast<int64_t>(dims[d].start.size()))
        return;
      out[d] = 0;
    }
  }

  /// The spatial rank, the (image, channel) planes, and the elements of one input plane and of
  /// one output plane.
  size_t rank() const { return dims.size(); }
  int64_t planes() const { return planeCount; }
  int64_t inputPlaneSize() const { return inSize; }
  int64_t outputPlaneSize() const { return outSize; }

private:
  friend class WindowTapIndex;

  struct Ranges {
    std::vector<int64_t> start, lo, hi, padded;
  };

  /// Whether every tap of the last dimension's window at `column` lies inside the input.
  bool columnInside(int64_t column) const {
    const Ranges &columns = dims.back();
    return columns.lo[column] == 0 && columns.hi[column] == kernel.back();
  }

  /// One window of a 2-D pool, at output (row, column).
  struct Window2d {
    const PoolWindows &windows;
    size_t row, column;

    template <typename Visit> void forEachTap(Visit &&visit) const {
      const Ranges &rows = windows.dims[0], &columns = windows.dims[1];
      int64_t rowLo = rows.lo[row], rowHi = rows.hi[row];
      int64_t columnLo = columns.lo[column], columnHi = columns.hi[column];
      if (rowLo >= rowHi || columnLo >= columnHi)
        return;
      int64_t rowStep = windows.dilations[0] * windows.inStrides[0];
      int64_t columnStep = windows.dilations[1];
      int64_t first = (rows.start[row] + rowLo * windows.dilations[0]) * windows.inStrides[0] +
                      columns.start[column] + columnLo * columnStep;
      int64_t rowEnd = first + (rowHi - rowLo) * rowStep, span = (columnHi - columnLo) * columnStep;
      for (int64_t rowOffset = first; rowOffset < rowEnd; rowOffset += rowStep)
        for (int64_t offset = rowOffset; offset < rowOffset + span; offset += columnStep)
          visit(offset);
    }
    int64_t divisor() const {
      const Ranges &rows = windows.dims[0], &columns = windows.dims[1];
      return windows.countIncludePad
                 ? rows.padded[row] * columns.padded[column]
                 : (rows.hi[row] - rows.lo[row]) * (columns.hi[column] - columns.lo[column]);
    }
  };

  /// One window of any rank, through forEachTap.
  struct WindowNd {
    const PoolWindows &windows;
    const std::vector<int64_t> &out;
    std::vector<int64_t> &tap;

    template <typename Visit> void forEachTap(Visit &&visit) const {
      windows.forEachTap(out, tap, visit);
    }
    int64_t divisor() const { return windows.divisor(out); }
  };
  std::vector<Ranges> dims;
  std::vector<int64_t> kernel, strides, dilations, inStrides, inSizes;
  bool countIncludePad;
  int64_t planeCount, inSize = 1, outSize = 1;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_POOLWINDOWS_H
