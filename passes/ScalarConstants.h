//===- ScalarConstants.h - reading splat constants in patterns ---*- C++ -*-===//
//
// Exporters write scalars (GELU's 0.5, attention's 1/sqrt(d), masked_fill's -inf) as splat
// constants; the fusion patterns read them through this one helper.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_SCALARCONSTANTS_H
#define MEMC_PASSES_SCALARCONSTANTS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace memc {

/// The value of a floating-point splat constant, or nothing.
inline std::optional<double> splatScalar(mlir::Value value) {
  mlir::DenseElementsAttr attr;
  if (!mlir::matchPattern(value, mlir::m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  if (mlir::isa<mlir::FloatType>(attr.getElementType()))
    return attr.getSplatValue<llvm::APFloat>().convertToDouble();
  return std::nullopt;
}

} // namespace memc

#endif // MEMC_PASSES_SCALARCONSTANTS_H
