//===- ElementTypes.h - the dtype table's MLIR side -------------*- C++ -*-===//
//
// The one place the compiler maps the dtype table (kernels/DTypeTable.h) to MLIR element types
// and back: the importer, the lowering to the plan and storage sizes all go through it.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_DIALECTS_MEMC_ELEMENTTYPES_H
#define MEMC_DIALECTS_MEMC_ELEMENTTYPES_H

#include "kernels/DTypeTable.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Types.h"

#include <optional>

namespace memc {

/// The MLIR element type of `dtype`; null for packed types, which MLIR has no type for.
mlir::Type elementTypeOf(kernels::DType dtype, mlir::MLIRContext *context);

/// The dtype of an element type, or of a shaped type's elements; nullopt if the table has none.
std::optional<kernels::DType> dtypeOf(mlir::Type type);

/// Bytes a static tensor of `type` occupies, ceil(elements * bits / 8) (i1 as one byte per
/// element); 0 for a type the table lacks.
uint64_t storageBytes(mlir::Type type);

/// True if every value of `narrow` is a value of `wide` (f32 holds every bf16 and f16), so a
/// cast from `narrow` to `wide` is exact.
bool holdsEveryValueOf(mlir::FloatType wide, mlir::FloatType narrow);

} // namespace memc

#endif // MEMC_DIALECTS_MEMC_ELEMENTTYPES_H
