//===- Tensor.cpp - tensor views ------------------------------------------===//
#include "kernels/Tensor.h"

namespace memc::kernels {

int64_t TensorView::numElements() const {
  // Unsigned so that a malformed shape wraps instead of overflowing; kernels' check() rejects
  // such shapes before anything runs.
  uint64_t count = 1;
  for (int64_t dim : shape)
    count *= static_cast<uint64_t>(dim);
  return static_cast<int64_t>(count);
}

size_t TensorView::sizeBytes() const {
  uint64_t bytes = 0;
  checkedStorageBytes(dtype, static_cast<uint64_t>(numElements()), bytes);
  return static_cast<size_t>(bytes);
}

std::string formatShape(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += ",";
    text += std::to_string(shape[i]);
  }
  return text + "]";
}

} // namespace memc::kernels
