//===- PrecisionPolicy.h - which ops compute in 16 bits ---------*- C++ -*-===//
//
// The one table that decides, per op, the element type mixed precision computes it in. The
// reference is torch.autocast's op lists; docs/design.md says where memc differs and why.
//
//===----------------------------------------------------------------------===//
#ifndef MEMC_PASSES_PRECISIONPOLICY_H
#define MEMC_PASSES_PRECISIONPOLICY_H

#include "mlir/IR/Operation.h"

namespace memc {

enum class ComputeType {
  /// Float operands and result in 16 bits; the kernel accumulates in f32 (autocast's
  /// lower-precision list: matmul, linear, conv).
  Low,
  /// Float operands and result in f32 (autocast's fp32 list: softmax, exp/log/pow, sums, losses).
  Full,
  /// The data in its own type, the per-channel parameters and the statistics in f32 (batch norm,
  /// as cuDNN's and the CPU kernel's 16-bit batch norm).
  KeepsData,
  /// Everything else: the widest float type of the operands that depend on the inputs
  /// (elementwise and layout ops follow the activations they are given).
  Widest,
};

/// What the policy table says about `op` (Widest when it is not listed).
ComputeType computeTypeOf(mlir::Operation *op);

} // namespace memc

#endif // MEMC_PASSES_PRECISIONPOLICY_H
