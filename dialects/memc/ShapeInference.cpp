//===- ShapeInference.cpp - static shape rules of the memc ops ------------===//
#include "dialects/memc/ShapeInference.h"

#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace llvm;

namespace memc {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text;
  raw_string_ostream os(text);
  os << '[';
  interleave(shape, os, ",");
  os << ']';
  return text;
}

int64_t numElements(ArrayRef<int64_t> shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

LogicalResult broadcastShapes(ArrayRef<ArrayRef<int64_t>> shapes, Shape &result,
                              std::string &error) {
  size_t rank = 0;
  for (ArrayRef<int64_t> shape : shapes)
    rank = std::max(rank, shape.size());
  result.assign(rank, 1);
  for (ArrayRef<int64_t> shape : shapes) {
    size_t offset = rank - shape.size();
    for (size_t i = 0; i < shape.size(); ++i) {
      int64_t &out = result[offset + i];
      if (shape[i] == out || shape[i] == 1)
        continue;
      if (out != 1) {
        error = "shapes";
        for (ArrayRef<int64_t> s : shapes)
          error += " " + formatShape(s);
        error += " do not broadcast";
        return failure();
      }
      out = shape[i];
    }
  }
  return success();
}

LogicalResult matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs, Shape &result,
                          std::string &error) {
  if (lhs.empty() || rhs.empty()) {
    error = "matmul operands must have rank >= 1";
    return failure();
  }
  Shape a(lhs.begin(), lhs.end()), b(rhs.begin(), rhs.end());
  bool promotedLhs = a.size() == 1, promotedRhs = b.size() == 1;
  if (promotedLhs)
    a.insert(a.begin(), 1);
  if (promotedRhs)
    b.push_back(1);
  if (a.back() != b[b.size() - 2]) {
    error = "matmul contraction dimensions differ: " + formatShape(lhs) + " x " +
            formatShape(rhs);
    return failure();
  }
  ArrayRef<int64_t> batchA = ArrayRef<int64_t>(a).drop_back(2);
  ArrayRef<int64_t> batchB = ArrayRef<int64_t>(b).drop_back(2);
  if (failed(broadcastShapes({batchA, batchB}, result, error))) {
    error = "matmul batch dimensions do not broadcast: " + formatShape(lhs) + " x " +
            formatShape(rhs);
    return failure();
  }
  if (!promotedLhs)
    result.push_back(a[a.size() - 2]);
  if (!promotedRhs)
    result.push_back(b.back());
  return success();
}

LogicalResult reduceShape(ArrayRef<int64_t> input, ArrayRef<int64_t> axes, bool keepdims,
                          Shape &result, std::string &error) {
  for (size_t i = 0; i < axes.size(); ++i) {
    if (axes[i] < 0 || axes[i] >= static_cast<int64_t>(input.size()) ||
        (i > 0 && axes[i] <= axes[i - 1])) {
      error = "reduction axes must be sorted, unique and in [0, rank)";
      return failure();
    }
  }
  result.clear();
  for (int64_t dim = 0; dim < static_cast<int64_t>(input.size()); ++dim) {
    if (!llvm::is_contained(axes, dim))
      result.push_back(input[dim]);
    else if (keepdims)
      result.push_back(1);
  }
  return success();
}

int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t padBegin,
                         int64_t padEnd, int64_t dilation, bool ceilMode) {
  int64_t span = input + padBegin + padEnd - dilation * (kernel - 1) - 1;
  if (span < 0)
    return 0;
  int64_t size = (ceilMode ? (span + stride - 1) / stride : span / stride) + 1;
  // As in PyTorch, a ceil-mode window that would start inside the end padding is dropped.
  if (ceilMode && (size - 1) * stride >= input + padBegin)
    --size;
  return size;
}

LogicalResult windowShape(ArrayRef<int64_t> input, int64_t channels, ArrayRef<int64_t> kernel,
                          ArrayRef<int64_t> strides, ArrayRef<int64_t> pads,
                          ArrayRef<int64_t> dilations, bool ceilMode, Shape &result,
                          std::string &error) {
  if (input.size() < 3) {
    error = "expected an NC[D]HW input of rank >= 3, got " + formatShape(input);
    return failure();
  }
  size_t spatial = input.size() - 2;
  if (kernel.size() != spatial || strides.size() != spatial || dilations.size() != spatial ||
      pads.size() != 2 * spatial) {
    error = "window attributes do not match " + std::to_string(spatial) + " spatial dimensions";
    return failure();
  }
  result.assign({input[0], channels});
  for (size_t i = 0; i < spatial; ++i) {
    if (kernel[i] <= 0 || strides[i] <= 0 || dilations[i] <= 0 || pads[i] < 0 ||
        pads[i + spatial] < 0) {
      error = "kernel sizes, strides and dilations must be positive, pads non-negative";
      return failure();
    }
    int64_t size = windowOutputSize(input[i + 2], kernel[i], strides[i], pads[i],
                                    pads[i + spatial], dilations[i], ceilMode);
    if (size <= 0) {
      error = "window larger than the padded input " + formatShape(input);
      return failure();
    }
    result.push_back(size);
  }
  return success();
}

int64_t sliceLength(int64_t start, int64_t limit, int64_t step) {
  if (step > 0)
    return limit > start ? (limit - start + step - 1) / step : 0;
  return start > limit ? (start - limit - step - 1) / -step : 0;
}

} // namespace memc
