//===- DTypes.h - element types as the runtime's formats name them -*- C++ -*-===//
//
// The runtime validates plans and files before any kernel code runs; it reads the element types'
// sizes, plan enum values and names from the one table (kernels/DTypeTable.h).
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

/// Bytes one element occupies, rounded up to a whole byte (kernels::dtypeSize).
uint64_t elementSize(DType dtype);
/// The table's name: "f32", "bf16", "bool", "nf4", ...
const char *dtypeString(DType dtype);
/// The DType with enum value `value` (a plan's memc.plan.DType); false if there is none.
bool dtypeFromValue(int64_t value, DType &out);

/// "[2, 3]"; "[]" for a scalar.
std::string shapeString(const std::vector<int64_t> &shape);
/// Number of elements of `shape` (1 for a scalar); false if a dim is negative or it overflows.
bool checkedNumElements(const std::vector<int64_t> &shape, uint64_t &out);
/// Storage bytes of a tensor, ceil(numElements * bits / 8); false on a negative dim or overflow.
bool checkedSizeBytes(DType dtype, const std::vector<int64_t> &shape, uint64_t &out);

} // namespace memc::runtime

#endif // MEMC_RUNTIME_SUPPORT_DTYPES_H
