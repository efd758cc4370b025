//===- StridedLayout.h - walking strided views of operands ------*- C++ -*-===//
//
// Walks an output shape with N operands read through arbitrary element strides: broadcasting
// (stride 0 on broadcast dimensions), transposes (permuted strides), slices (scaled, possibly
// negative strides). Dimensions that need no index arithmetic are merged first: same-shape
// operands collapse to one contiguous run, a scalar to a stride-0 run, a row bias [M] against
// [N, M] to two dimensions. The walk hands out maximal runs along the innermost merged
// dimension, so inner loops are plain strided loops the compiler vectorizes, and any sub-range
// of the output can be walked (for threads).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_KERNELS_CPU_STRIDEDLAYOUT_H
#define MEMC_KERNELS_CPU_STRIDEDLAYOUT_H

#include "kernels/ShapeRules.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace memc::kernels {

template <size_t N> class StridedLayout {
public:
  /// Operand k's element for output index (i_0, ..., i_r) is at sum_d i_d * strides[k][d].
  StridedLayout(const Shape &output, const std::array<Shape, N> &fullStrides) {
    total = 1;
    for (size_t d = 0; d < output.size(); ++d) {
      total *= output[d];
      if (output[d] == 1)
        continue;
      bool mergeable = !dims.empty();
      for (size_t k = 0; k < N && mergeable; ++k)
        mergeable = strides[k].back() == fullStrides[k][d] * output[d];
      if (mergeable) {
        dims.back() *= output[d];
        for (size_t k = 0; k < N; ++k)
          strides[k].back() = fullStrides[k][d];
        continue;
      }
      dims.push_back(output[d]);
      for (size_t k = 0; k < N; ++k)
        strides[k].push_back(fullStrides[k][d]);
    }
    if (dims.empty()) {
      dims.push_back(1);
      for (size_t k = 0; k < N; ++k)
        strides[k].push_back(0);
    }
  }

  int64_t numElements() const { return total; }
  const Shape &mergedDims() const { return dims; }
  const Shape &mergedStrides(size_t k) const { return strides[k]; }

  /// Stride of operand k along the innermost merged dimension.
  int64_t innerStride(size_t k) const { return strides[k].back(); }

  /// Calls run(outIndex, offsets, count) for each maximal run of output elements in
  /// [begin, end) along the innermost dimension: output element outIndex + j reads operand k
  /// at offsets[k] + j * innerStride(k).
  template <typename Run> void forEachRun(int64_t begin, int64_t end, Run &&run) const {
    size_t rank = dims.size();
    std::vector<int64_t> index(rank);
    std::array<int64_t, N> offsets{};
    int64_t rest = begin;
    for (size_t d = rank; d-- > 0;) {
      index[d] = rest % dims[d];
      rest /= dims[d];
      for (size_t k = 0; k < N; ++k)
        offsets[k] += index[d] * strides[k][d];
    }
    int64_t inner = dims.back();
    for (int64_t position = begin; position < end;) {
      int64_t count = std::min(inner - index.back(), end - position);
      run(position, offsets, count);
      position += count;
      index.back() += count;
      for (size_t k = 0; k < N; ++k)
        offsets[k] += count * strides[k].back();
      if (index.back() < inner)
        continue;
      // Carry into the outer dimensions, odometer style.
      for (size_t d = rank; d-- > 0;) {
        if (d + 1 < rank) {
          ++index[d];
          for (size_t k = 0; k < N; ++k)
            offsets[k] += strides[k][d];
        }
        if (index[d] < dims[d] || d == 0)
          break;
        for (size_t k = 0; k < N; ++k)
          offsets[k] -= dims[d] * strides[k][d];
        index[d] = 0;
      }
    }
  }

private:
  Shape dims;                                  // merged output dimensions, at least one
  std::array<std::vector<int64_t>, N> strides; // element strides of each operand per dimension
  int64_t total = 0;
};

/// Row-major element strides of `operand` read as broadcast to `output` (numpy rule): 0 on
/// the dimensions it broadcasts along. `operand` must broadcast to `output`.
inline Shape broadcastStrides(const Shape &output, const Shape &operand) {
  Shape strides(output.size(), 0);
  size_t offset = output.size() - operand.size();
  int64_t running = 1;
  for (size_t d = operand.size(); d-- > 0;) {
    strides[offset + d] = operand[d] == 1 ? 0 : running;
    running *= operand[d];
  }
  return strides;
}

template <size_t N>
StridedLayout<N> broadcastLayout(const Shape &output,
                                 const std::array<const Shape *, N> &operands) {
  std::array<Shape, N> strides;
  for (size_t k = 0; k < N; ++k)
    strides[k] = broadcastStrides(output, *operands[k]);
  return StridedLayout<N>(output, strides);
}

/// Row-major element strides of a contiguous tensor.
inline Shape contiguousStrides(const Shape &shape) {
  Shape strides(shape.size(), 1);
  for (size_t d = shape.size(); d-- > 1;)
    strides[d - 1] = strides[d] * shape[d];
  return strides;
}

} // namespace memc::kernels

#endif // MEMC_KERNELS_CPU_STRIDEDLAYOUT_H
