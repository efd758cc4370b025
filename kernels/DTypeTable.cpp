//===- DTypeTable.cpp - lookups in the element-type table -----------------===//
#include "kernels/DTypeTable.h"

#include <cstring>

namespace memc::kernels {

namespace {

/// The first row for which `matches` holds; reverse lookups skip packed rows, which borrow
/// another type's format names.
template <typename Predicate> const DTypeInfo *findRow(Predicate matches) {
  for (const DTypeInfo &row : kDTypeTable)
    if (matches(row))
      return &row;
  return nullptr;
}

bool sameName(const char *name, const char *candidate) {
  return candidate && std::strcmp(name, candidate) == 0;
}

} // namespace

const DTypeInfo *findDType(DType dtype) {
  return findRow([&](const DTypeInfo &row) { return row.dtype == dtype; });
}

const DTypeInfo *findDTypeValue(int64_t value) {
  return findRow([&](const DTypeInfo &row) { return static_cast<int64_t>(row.dtype) == value; });
}

const DTypeInfo *findSafetensorsDType(const char *name) {
  return findRow([&](const DTypeInfo &row) {
    return row.kind != DTypeKind::Packed && sameName(name, row.safetensorsName);
  });
}

const DTypeInfo *findOnnxDType(int32_t onnxDataType) {
  return findRow([&](const DTypeInfo &row) {
    return row.kind != DTypeKind::Packed && row.onnxDataType == onnxDataType;
  });
}

const DTypeInfo *findNumpyDType(const char *descr) {
  return findRow([&](const DTypeInfo &row) {
    return row.kind != DTypeKind::Packed && sameName(descr, row.numpyDescr);
  });
}

uint32_t dtypeBits(DType dtype) {
  const DTypeInfo *row = findDType(dtype);
  return row ? row->bits : 0;
}

bool checkedStorageBytes(DType dtype, uint64_t count, uint64_t &out) {
  uint64_t bits = dtypeBits(dtype);
  // Whole bytes first, so that count * bits cannot overflow where the byte count fits.
  uint64_t wholeBytes;
  if (bits == 0 || __builtin_mul_overflow(count / 8, bits, &wholeBytes))
    return false;
  return !__builtin_add_overflow(wholeBytes, (count % 8 * bits + 7) / 8, &out);
}

size_t dtypeSize(DType dtype) { return (dtypeBits(dtype) + 7) / 8; }

const char *dtypeName(DType dtype) {
  const DTypeInfo *row = findDType(dtype);
  return row ? row->irName : "<invalid dtype>";
}

bool isFloating(DType dtype) {
  const DTypeInfo *row = findDType(dtype);
  return row && row->kind == DTypeKind::Float;
}

} // namespace memc::kernels
