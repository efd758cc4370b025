//===- Autodiff.h - reverse-mode differentiation of memc IR -----*- C++ -*-===//
#ifndef MEMC_COMPILER_TRAINING_AUTODIFF_H
#define MEMC_COMPILER_TRAINING_AUTODIFF_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/Value.h"

namespace memc {

/// Appends to the builder's block the reverse sweep over `ops` (the forward computation, in
/// order) from `seed`, the gradient of `output`. Gradients flow only through `active` values
/// (those depending on a trainable argument); each op's rule comes from its
/// DifferentiableOpInterface, and gradients of values used several times are summed. Returns the
/// gradient of each of `wrt` (null where no gradient reaches it). Fails with an error on an
/// active op that has no gradient rule.
mlir::FailureOr<llvm::SmallVector<mlir::Value>>
buildReverseSweep(mlir::OpBuilder &builder, llvm::ArrayRef<mlir::Operation *> ops,
                  mlir::Value output, mlir::Value seed, mlir::ValueRange wrt);

} // namespace memc

#endif // MEMC_COMPILER_TRAINING_AUTODIFF_H
