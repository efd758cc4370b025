//===- WindowTapIndex.h - a window's taps as one-byte indices ---*- C++ -*-===//
//
// max_pool_with_argmax saves each output's maximum tap as its row-major index in the whole
// window, padding included (below the product of kernel_shape, at most 256: a byte), and
// max_pool_grad_argmax turns the index back into an element offset of the input plane. Both run
// once per output, so neither divides: the table here is built once per call. An index's taps
// are t_d * dilation_d from the window's origin (the offset of tap 0, possibly in the padding);
// the offset of a tap from the origin names the tap uniquely when every window but the
// outermost dimension's fits in the input (mixed radix), which the forward's table uses, else it
// decodes the coordinates.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_WINDOWTAPINDEX_H
#define MEMC_KERNELS_CPU_WINDOWTAPINDEX_H

#include "kernels/cpu/PoolWindows.h"

#include <cstdint>
#include <vector>

namespace memc::kernels {

class WindowTapIndex {
public:
  explicit WindowTapIndex(const PoolWindows &windows) : windows(windows) {
    size_t rank = windows.dims.size();
    taps = 1;
    for (int64_t k : windows.kernel)
      taps *= k;
    // Every byte has a row, so a byte no forward wrote (at most taps - 1) reads in bounds.
    steps.resize(kBytes * rank);
    tapOffsets.resize(kBytes);
    for (int64_t byte = 0; byte < static_cast<int64_t>(kBytes); ++byte) {
      int64_t tap = byte % taps, rest = tap, offset = 0;
      for (size_t d = rank; d-- > 0;) {
        int64_t step = rest % windows.kernel[d] * windows.dilations[d];
        rest /= windows.kernel[d];
        steps[static_cast<size_t>(byte) * rank + d] = step;
        offset += step * windows.inStrides[d];
      }
      tapOffsets[static_cast<size_t>(byte)] = offset;
    }
    std::vector<int64_t> out(rank, 0);
    for (int64_t p = 0; p < windows.outSize; ++p, windows.next(out)) {
      int64_t origin = 0;
      for (size_t d = 0; d < rank; ++d)
        origin += windows.dims[d].start[static_cast<size_t>(out[d])] * windows.inStrides[d];
      origins.push_back(origin);
    }
    unique = true;
    for (size_t d = 1; d < rank; ++d)
      unique &= (windows.kernel[d] - 1) * windows.dilations[d] < windows.inSizes[d];
    if (unique) {
      tapOfOffset.assign(static_cast<size_t>(tapOffsets[static_cast<size_t>(taps - 1)] + 1), 0);
      for (int64_t tap = 0; tap < taps; ++tap)
        tapOfOffset[static_cast<size_t>(tapOffsets[static_cast<size_t>(tap)])] =
            static_cast<uint8_t>(tap);
    }
  }

  /// The index of the tap at element `offset` of an input plane, one of the taps of the window
  /// at output position `p` of a plane.
  uint8_t tapIndexOf(int64_t p, int64_t offset) const {
    int64_t fromOrigin = offset - origins[static_cast<size_t>(p)];
    if (unique)
      return tapOfOffset[static_cast<size_t>(fromOrigin)];
    // Decode the input coordinates, the last dimension fastest.
    size_t rank = windows.dims.size();
    int64_t index = 0, scale = 1;
    for (size_t d = rank; d-- > 0;) {
      int64_t outputs = static_cast<int64_t>(windows.dims[d].start.size());
      int64_t in = offset / windows.inStrides[d] % windows.inSizes[d];
      int64_t start = windows.dims[d].start[static_cast<size_t>(p % outputs)];
      p /= outputs;
      index += (in - start) / windows.dilations[d] * scale;
      scale *= windows.kernel[d];
    }
    return static_cast<uint8_t>(index);
  }

  /// Calls visit(p, offset) for every output position p of a plane in order, with the element
  /// offset in an input plane of tap tapIndex[p] of p's window, -1 for a tap in the padding.
  template <typename Visit> void forEachTapOffset(const uint8_t *tapIndex, Visit &&visit) const {
    size_t rank = windows.dims.size();
    if (rank == 2) { // the common case as two plain loops, no odometer
      const std::vector<int64_t> &rows = windows.dims[0].start, &columns = windows.dims[1].start;
      int64_t height = windows.inSizes[0], width = windows.inSizes[1], p = 0;
      for (int64_t rowStart : rows)
        for (int64_t columnStart : columns) {
          const int64_t *step = &steps[static_cast<size_t>(tapIndex[p]) * 2];
          int64_t row = rowStart + step[0], column = columnStart + step[1];
          bool inside = row >= 0 && row < height && column >= 0 && column < width;
          visit(p, inside ? row * width + column : int64_t{-1});
          ++p;
        }
      return;
    }
    std::vector<int64_t> out(rank, 0);
    for (int64_t p = 0; p < windows.outSize; ++p, windows.next(out)) {
      const int64_t *step = &steps[static_cast<size_t>(tapIndex[p]) * rank];
      bool inside = true;
      for (size_t d = 0; d < rank; ++d) {
        int64_t in = windows.dims[d].start[static_cast<size_t>(out[d])] + step[d];
        inside &= in >= 0 && in < windows.inSizes[d];
      }
      visit(p, inside ? origins[static_cast<size_t>(p)] +
                            tapOffsets[static_cast<size_t>(tapIndex[p])]
                      : int64_t{-1});
    }
  }

private:
  static constexpr size_t kBytes = 256;
  const PoolWindows &windows;
  int64_t taps;
  /// steps[byte * rank + d]: tap (byte % taps)'s distance from the origin along dimension d, in
  /// elements of that dimension; tapOffsets[byte]: its distance in elements of the plane.
  std::vector<int64_t> steps, tapOffsets;
  /// The origin of each output position's window (PoolWindows::next's order).
  std::vector<int64_t> origins;
  /// Whether a tap's offset from the origin names it; then tapOfOffset[offset] is its index.
  bool unique;
  std::vector<uint8_t> tapOfOffset;
};

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_WINDOWTAPINDEX_H
