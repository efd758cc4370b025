//===- BiasAddMatching.h - a bias added along the last axis ------*- C++ -*-===//
//
// torch.onnx.export writes a linear layer's bias as an add after the product: Gemm's C operand
// (imported as matmul + add) or MatMul then Add, the bias on either side. A fusion that takes
// the bias into the next op's kernel matches the add here.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_BIASADDMATCHING_H
#define MEMC_PASSES_BIASADDMATCHING_H

#include "dialects/memc/MemcDialect.h"

#include <optional>

namespace memc {

/// An add of a data tensor and a bias of its last dimension's shape.
struct BiasAdd {
  AddOp add;
  mlir::Value data, bias;
};

/// `value` as `data + bias` in either operand order: the data of the result's type, the bias
/// [N] of the same element type, N the last dimension. A bias broadcast more widely, or an add
/// of two full tensors (a residual), is no bias add.
inline std::optional<BiasAdd> matchBiasAdd(mlir::Value value) {
  auto add = value.getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  auto type = llvm::cast<mlir::RankedTensorType>(add.getType());
  if (type.getRank() < 2)
    return std::nullopt;
  for (auto [data, bias] : {std::pair(add.getLhs(), add.getRhs()),
                            std::pair(add.getRhs(), add.getLhs())}) {
    auto biasType = llvm::dyn_cast<mlir::RankedTensorType>(bias.getType());
    if (data.getType() == type && biasType &&
        biasType.getShape() == mlir::ArrayRef<int64_t>{type.getShape().back()} &&
        biasType.getElementType() == type.getElementType())
      return BiasAdd{add, data, bias};
  }
  return std::nullopt;
}

} // namespace memc

#endif // MEMC_PASSES_BIASADDMATCHING_H
