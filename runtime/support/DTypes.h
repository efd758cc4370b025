//===- DTypes.h - element types as the runtime's formats name them -*- C++ -*-===//
//
// The runtime validates plans and files before any kernel code runs, so it knows the element
// types itself: their sizes, the plan's enum values (equal to kernels::DType) and the names the
// error messages use.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_RUNTIME_SUPPORT_DTYPES_H
#define MEMC_RUNTIME_SUPPORT_DTYPES_H

#include "kernels/Tensor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace memc::runtime {

using kernels::DType;

/// Bytes per element.
uint64_t elementSize(DType dtype);
/// "f32", "f16", "bf16", "i64", "i32", "bool".
const char *dtypeString(DType dtype);
/// The DType with enum value `value` (a plan's memc.plan.DType); false if there is none.
bool dtypeFromValue(int64_t value, DType &out);

/// "[2, 3]"; "[]" for a scalar.
std::string shapeString(const std::vector<int64_t> &shape);
/// Number of elements of `shape` (1 for a scalar); false if a dim is negative or it overflows.
bool checkedNumElements(const std::vector<int64_t> &shape, uint64_t &out);
/// numElements * elementSize; false on a negative dim or overflow.
bool checkedSizeBytes(DType dtype, const std::vector<int64_t> &shape, uint64_t &out);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_DTYPES_H
