//===- DTypes.cpp - element types as the runtime's formats name them ------===//
#include "runtime/support/DTypes.h"

#include "runtime/support/Bytes.h"

namespace memc::runtime {

uint64_t elementSize(DType dtype) { return kernels::dtypeSize(dtype); }

const char *dtypeString(DType dtype) {
  const kernels::DTypeInfo *row = kernels::findDType(dtype);
  return row ? row->name : "<invalid dtype>";
}

bool dtypeFromValue(int64_t value, DType &out) {
  const kernels::DTypeInfo *row = kernels::findDTypeValue(value);
  if (row)
    out = row->dtype;
  return row != nullptr;
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
  return checkedNumElements(shape, count) && kernels::checkedStorageBytes(dtype, count, out);
}

} // namespace memc::runtime
