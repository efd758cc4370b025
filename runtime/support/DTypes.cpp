//===- DTypes.cpp - element types as the runtime's formats name them ------===//
#include "runtime/support/DTypes.h"

#include "runtime/support/Bytes.h"

namespace memc::runtime {

uint64_t elementSize(DType dtype) { return kernels::dtypeSize(dtype); }

const char *dtypeString(DType dtype) {
  // The runtime's messages and files say "bool" where the kernels say "i1".
  return dtype == DType::Bool ? "bool" : kernels::dtypeName(dtype);
}

bool dtypeFromValue(int64_t value, DType &out) {
  if (value < static_cast<int64_t>(DType::F32) || value > static_cast<int64_t>(DType::Bool))
    return false;
  out = static_cast<DType>(value);
  return true;
}

std::string shapeString(const std::vector<int64_t> &shape) {
  std::string text = "[";
  for (size_t i = 0; i < shape.size(); ++i)
    text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + "]";
}

bool checkedNumElements(const std::vector<int64_t> &shape, uint64_t &out) {
  uint64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || !checkedMul(count, static_cast<uint64_t>(dim), count))
      return false;
  // Element counts are int64 in the kernels' TensorView.
  if (count > static_cast<uint64_t>(INT64_MAX))
    return false;
  out = count;
  return true;
}

bool checkedSizeBytes(DType dtype, const std::vector<int64_t> &shape, uint64_t &out) {
  uint64_t count;
  return checkedNumElements(shape, count) && checkedMul(count, elementSize(dtype), out);
}

} // namespace memc::runtime
