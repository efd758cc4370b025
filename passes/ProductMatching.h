//===- ProductMatching.h - products as exporters write them -----*- C++ -*-===//
//
// torch.onnx.export writes one product in many shapes: `x * a * b`, `(x * a) * b`, `b * (a * x)`,
// `x / c` for a constant c, `x^2` as `pow(x, 2)`. The fusion patterns (GELU, RMS norm) compare
// products through this one flattening, so every association and operand order is the same
// (scalar scale, non-constant factors).
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_PRODUCTMATCHING_H
#define MEMC_PASSES_PRODUCTMATCHING_H

#include "dialects/memc/MemcDialect.h"
#include "passes/ScalarConstants.h"

#include "llvm/ADT/SmallVector.h"

#include <cmath>

namespace memc {

/// A product `scale * factors[0] * factors[1] * ...`.
struct Product {
  double scale = 1.0;
  llvm::SmallVector<mlir::Value, 3> factors;
};

/// Flattens nested multiplications, divisions by constants and small integer powers.
inline void collectProduct(mlir::Value value, Product &product) {
  if (std::optional<double> scalar = splatScalar(value)) {
    product.scale *= *scalar;
    return;
  }
  if (auto mul = value.getDefiningOp<MulOp>()) {
    collectProduct(mul.getLhs(), product);
    collectProduct(mul.getRhs(), product);
    return;
  }
  if (auto div = value.getDefiningOp<DivOp>()) {
    if (std::optional<double> divisor = splatScalar(div.getRhs())) {
      collectProduct(div.getLhs(), product);
      product.scale /= *divisor;
      return;
    }
  }
  if (auto pow = value.getDefiningOp<PowOp>()) {
    std::optional<double> exponent = splatScalar(pow.getRhs());
    if (exponent && *exponent == std::round(*exponent) && *exponent >= 1 && *exponent <= 4) {
      for (int i = 0; i < static_cast<int>(*exponent); ++i)
        collectProduct(pow.getLhs(), product);
      return;
    }
  }
  product.factors.push_back(value);
}

inline Product productOf(mlir::Value value) {
  Product product;
  collectProduct(value, product);
  return product;
}

} // namespace memc

#endif // MEMC_PASSES_PRODUCTMATCHING_H
