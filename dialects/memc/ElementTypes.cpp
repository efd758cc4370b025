//===- ElementTypes.cpp - the dtype table's MLIR side ---------------------===//
#include "dialects/memc/ElementTypes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/TypeUtilities.h"

using namespace mlir;

namespace memc {

using kernels::DType;

Type elementTypeOf(DType dtype, MLIRContext *context) {
  Builder builder(context);
  // No default: a new row of the table is a compile warning here until it is mapped.
  switch (dtype) {
  case DType::F32:
    return builder.getF32Type();
  case DType::F16:
    return builder.getF16Type();
  case DType::BF16:
    return builder.getBF16Type();
  case DType::I64:
    return builder.getI64Type();
  case DType::I32:
    return builder.getI32Type();
  case DType::Bool:
    return builder.getI1Type();
  case DType::U8:
    return builder.getIntegerType(8, /*isSigned=*/false);
  case DType::I8:
    return builder.getI8Type();
  case DType::NF4:
    return nullptr;
  }
  return nullptr;
}

std::optional<DType> dtypeOf(Type type) {
  Type element = getElementTypeOrSelf(type);
  for (const kernels::DTypeInfo &row : kernels::kDTypeTable)
    if (elementTypeOf(row.dtype, type.getContext()) == element)
      return row.dtype;
  return std::nullopt;
}

uint64_t storageBytes(Type type) {
  auto tensor = cast<ShapedType>(type);
  std::optional<DType> dtype = dtypeOf(tensor);
  uint64_t bytes = 0;
  if (!dtype || !kernels::checkedStorageBytes(*dtype, tensor.getNumElements(), bytes))
    return 0;
  return bytes;
}

bool holdsEveryValueOf(FloatType wide, FloatType narrow) {
  return wide == narrow || (wide.getWidth() > narrow.getWidth() &&
                            wide.getFPMantissaWidth() >= narrow.getFPMantissaWidth());
}

} // namespace memc
